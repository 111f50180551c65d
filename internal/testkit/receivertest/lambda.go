package receivertest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Shape is one kind of HTTP event that Lambda delivers, with its fixture: a real-shaped event of
// that kind delivering the hub payload to /webhooks/hello.
type Shape struct {
	Name     string
	Fixture  string // file name in adapters/lambda/testdata/events
	BasePath string // the custom-domain base path in the event's path: the adapter must be told
}

// FixturePath is the path of the fixtures from the module root.
const FixturePath = "adapters/lambda/testdata/events"

// Shapes lists every event shape the Lambda adapter serves.
var Shapes = []Shape{
	{Name: "rest-api", Fixture: "apigw-v1-rest-stage.json"},
	{Name: "rest-api-custom-domain", Fixture: "apigw-v1-custom-domain.json", BasePath: "/hooks"},
	{Name: "http-api", Fixture: "apigw-v2-http-api-stage.json"},
	{Name: "function-url", Fixture: "function-url-base64.json"},
	{Name: "alb", Fixture: "alb-multi-value.json"},
}

// Event returns the fixture of s.
func (s Shape) Event() []byte { return mustRead(FixturePath + "/" + s.Fixture) }

// fixtureRoute is the path every fixture delivers to; what precedes it in a fixture is its prefix.
const fixtureRoute = "/webhooks/hello"

// LambdaEvent renders c as an event shaped like fixture: every field of the fixture is kept except
// the request itself, which is c's method, path (behind the fixture's stage or base path), query,
// headers (lower-cased where the event source lower-cases them) and body (base64 if the fixture's is).
func LambdaEvent(fixture []byte, c Case) ([]byte, error) {
	var ev map[string]any
	if err := json.Unmarshal(fixture, &ev); err != nil {
		return nil, fmt.Errorf("fixture: %v", err)
	}
	p, rawQuery, _ := strings.Cut(c.Path, "?")
	query, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, err
	}
	rc, _ := ev["requestContext"].(map[string]any)
	b64, _ := ev["isBase64Encoded"].(bool)
	if !utf8.Valid(c.Body) {
		// A body that is not UTF-8 cannot travel as a JSON string: event sources send it in base64.
		b64 = true
		ev["isBase64Encoded"] = true
	}
	body := any(nil)
	if len(c.Body) > 0 {
		body = string(c.Body)
		if b64 {
			body = base64.StdEncoding.EncodeToString(c.Body)
		}
	}
	ev["body"] = body
	if _, ok := ev["pathParameters"].(map[string]any); ok {
		ev["pathParameters"] = map[string]any{"proxy": strings.TrimPrefix(p, "/")}
	}

	switch {
	case ev["version"] == "2.0": // HTTP API or function URL
		ev["rawPath"] = prefix(ev["rawPath"]) + p
		ev["rawQueryString"] = rawQuery
		ev["headers"] = lowerHeaders(ev["headers"], c, true)
		h := rc["http"].(map[string]any)
		h["method"], h["path"] = c.Method, prefix(h["path"])+p
	case rc["elb"] != nil: // ALB: lower-case names, multi-value, query values still URL-encoded
		ev["httpMethod"], ev["path"] = c.Method, prefix(ev["path"])+p
		mq := map[string]any{}
		for k, vs := range query {
			var enc []any
			for _, v := range vs {
				enc = append(enc, url.QueryEscape(v))
			}
			mq[url.QueryEscape(k)] = enc
		}
		ev["multiValueQueryStringParameters"] = mq
		single := lowerHeaders(ev["multiValueHeaders"], c, false)
		mv := map[string]any{}
		for k, v := range single {
			mv[k] = []any{v}
		}
		ev["multiValueHeaders"] = mv
	default: // REST API: names as sent, single and multi-value, query decoded
		ev["httpMethod"], rc["httpMethod"] = c.Method, c.Method
		ev["path"] = prefix(ev["path"]) + p
		rc["path"] = prefix(rc["path"]) + p
		single, multi := map[string]any{}, map[string]any{}
		for k, v := range ev["headers"].(map[string]any) {
			if keepFixtureHeader(k) {
				single[k] = v
				multi[k] = []any{v}
			}
		}
		for k, v := range c.Header {
			single[k], multi[k] = v, []any{v}
		}
		ev["headers"], ev["multiValueHeaders"] = single, multi
		if len(query) == 0 {
			ev["queryStringParameters"], ev["multiValueQueryStringParameters"] = nil, nil
		} else {
			qs, mq := map[string]any{}, map[string]any{}
			for k, vs := range query {
				qs[k] = vs[len(vs)-1]
				var all []any
				for _, v := range vs {
					all = append(all, v)
				}
				mq[k] = all
			}
			ev["queryStringParameters"], ev["multiValueQueryStringParameters"] = qs, mq
		}
	}
	return json.Marshal(ev)
}

// prefix is what a fixture's path holds in front of /webhooks/hello: a stage, a base path or "".
func prefix(p any) string {
	s, _ := p.(string)
	return strings.TrimSuffix(s, fixtureRoute)
}

// keepFixtureHeader: the fixture's headers that describe the connection (Host, X-Forwarded-*) stay;
// those that describe the request come from the case.
func keepFixtureHeader(name string) bool {
	switch strings.ToLower(name) {
	case "x-webhook-secret", "content-type", "content-length":
		return false
	}
	return true
}

// lowerHeaders merges the fixture's connection headers (single or multi-valued) with c's, all
// names lower-cased, with a content-length when setLength and there is a body.
func lowerHeaders(fixture any, c Case, setLength bool) map[string]any {
	out := map[string]any{}
	m, _ := fixture.(map[string]any)
	for k, v := range m {
		if !keepFixtureHeader(k) {
			continue
		}
		if vs, ok := v.([]any); ok && len(vs) > 0 {
			v = vs[0]
		}
		out[strings.ToLower(k)] = v
	}
	for k, v := range c.Header {
		out[strings.ToLower(k)] = v
	}
	if setLength && len(c.Body) > 0 {
		out["content-length"] = strconv.Itoa(len(c.Body))
	}
	return out
}

// ReadLambdaResponse reads the response JSON of an HTTP event (any shape) as a client would see it.
func ReadLambdaResponse(b []byte) (Result, error) {
	var r struct {
		StatusCode        int                 `json:"statusCode"`
		Headers           map[string]string   `json:"headers"`
		MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
		Body              string              `json:"body"`
		IsBase64Encoded   bool                `json:"isBase64Encoded"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return Result{}, fmt.Errorf("response is not Lambda HTTP response JSON: %v: %.200s", err, b)
	}
	if r.StatusCode == 0 {
		return Result{}, fmt.Errorf("response has no statusCode: %.200s", b)
	}
	h := http.Header{}
	keys := make([]string, 0, len(r.Headers))
	for k := range r.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		h.Set(k, r.Headers[k])
	}
	for k, vs := range r.MultiValueHeaders {
		h[http.CanonicalHeaderKey(k)] = vs
	}
	body := []byte(r.Body)
	if r.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(r.Body); err != nil {
			return Result{}, fmt.Errorf("response body is not base64: %v", err)
		}
	}
	return Result{Status: r.StatusCode, Header: h, Body: body}, nil
}
