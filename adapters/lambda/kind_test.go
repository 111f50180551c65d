package lambda

import (
	"testing"

	"github.com/akrylysov/algnhsa"

	"github.com/robothub/robothub/internal/testkit/receivertest"
)

func TestEventKind(t *testing.T) {
	want := map[string]algnhsa.RequestType{
		"rest-api":               algnhsa.RequestTypeAPIGatewayV1,
		"rest-api-custom-domain": algnhsa.RequestTypeAPIGatewayV1,
		"http-api":               algnhsa.RequestTypeAPIGatewayV2,
		"function-url":           algnhsa.RequestTypeAPIGatewayV2,
		"alb":                    algnhsa.RequestTypeALB,
	}
	for _, s := range receivertest.Shapes {
		if got := eventKind(s.Event()); got != want[s.Name] {
			t.Errorf("%s: kind %v, want %v", s.Name, got, want[s.Name])
		}
	}
	for event, kind := range map[string]algnhsa.RequestType{
		`{"version":"2.0","rawPath":"/"}`:               algnhsa.RequestTypeAPIGatewayV2,
		`{"version" :  "2.0"}`:                          algnhsa.RequestTypeAPIGatewayV2,
		`{"version":"1.0","httpMethod":"POST"}`:         algnhsa.RequestTypeAPIGatewayV1,
		`{"body":"{\"version\":\"2.0\"}"}`:              algnhsa.RequestTypeAuto,
		`{"body":"\"elb\" \"httpMethod\""}`:             algnhsa.RequestTypeAuto,
		`{"Records":[{"eventSource":"aws:s3"}]}`:        algnhsa.RequestTypeAuto,
		`{"requestContext":{"elb":{}},"httpMethod":""}`: algnhsa.RequestTypeALB,
	} {
		if got := eventKind([]byte(event)); got != kind {
			t.Errorf("eventKind(%s) = %v, want %v", event, got, kind)
		}
	}
}

// TestMisleadingHeaders: headers named like the fields eventKind looks for lead it astray; the
// event is still served, by automatic detection.
func TestMisleadingHeaders(t *testing.T) {
	h := NewHandler(fixtureReceiver(t))
	for _, fixture := range []string{"apigw-v1-rest-stage.json", "apigw-v2-http-api-stage.json", "function-url-base64.json"} {
		ev := readEvent(t, fixture)
		headers := ev["headers"].(map[string]any)
		headers["elb"] = "x"
		headers["version"] = "2.0"
		if mv, ok := ev["multiValueHeaders"].(map[string]any); ok {
			mv["elb"], mv["version"] = []any{"x"}, []any{"2.0"}
		}
		got, err := invokeMap(t, h, ev)
		if err != nil {
			t.Fatalf("%s: %v", fixture, err)
		}
		if got.Status != 200 {
			t.Errorf("%s: status %d %s", fixture, got.Status, got.Body)
		}
	}
}
