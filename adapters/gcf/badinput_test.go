package gcf

import (
	"net/http/httptest"
	"testing"

	"github.com/robothub/robothub/internal/testkit/badinput"
	"github.com/robothub/robothub/internal/testkit/receivertest"
)

// TestBadInputCloudFunction sends the hostile requests of receivertest.HostileCases to the Cloud
// Function's handler: each gets the net/http server's answer (the status the README documents), and
// the function still serves afterwards. The rows go into docs/RELIABILITY.md.
func TestBadInputCloudFunction(t *testing.T) {
	srv := receivertest.NewReceiver(t, true, nil)
	ts := httptest.NewServer(Handler(srv, "RobothubWebhooks"))
	defer ts.Close()
	reference := receivertest.Reference(t, srv)
	table := badinput.NewTable("gcf", "go test -run TestBadInputCloudFunction ./adapters/gcf")
	cases := receivertest.HostileCases()
	ran := 0
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			ran++
			got := receivertest.Send(t, ts.URL, c)
			receivertest.Check(t, c, got, reference(c))
			table.Add(badinput.Row{Input: c.Name, Request: c.Method + " " + c.Path, Expected: c.Status, Observed: got.Status,
				Answer: badinput.Answer{Body: got.Body}.Message()})
			if after := receivertest.Send(t, ts.URL, receivertest.Case{Method: "GET", Path: "/healthz"}); after.Status != 200 {
				t.Fatalf("the function no longer serves: %d %s", after.Status, after.Body)
			}
		})
	}
	table.Finish(t, ran == len(cases))
}
