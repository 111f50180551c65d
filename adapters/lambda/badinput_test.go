package lambda

import (
	"context"
	"fmt"
	"testing"

	"github.com/robothub/robothub/internal/testkit/badinput"
	"github.com/robothub/robothub/internal/testkit/receivertest"
)

// TestBadInputLambda sends the hostile requests of receivertest.HostileCases through every Lambda
// event shape: each gets the net/http server's answer (the status the README documents), never an
// invocation error, and the handler still serves afterwards. The rows go into docs/RELIABILITY.md.
func TestBadInputLambda(t *testing.T) {
	srv := receivertest.NewReceiver(t, true, nil)
	reference := receivertest.Reference(t, srv)
	table := badinput.NewTable("lambda", "go test -run TestBadInputLambda ./adapters/lambda")
	cases := receivertest.HostileCases()
	health := receivertest.Case{Name: "health", Method: "GET", Path: "/healthz", Status: 200}
	ran := 0
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			ran++
			want := reference(c)
			observed := map[int]bool{}
			for _, shape := range receivertest.Shapes {
				h := NewHandler(srv, WithBasePath(shape.BasePath))
				invoke := func(c receivertest.Case) receivertest.Result {
					event, err := receivertest.LambdaEvent(shape.Event(), c)
					if err != nil {
						t.Fatal(err)
					}
					out, err := h.Invoke(context.Background(), event)
					if err != nil {
						t.Fatalf("%s: Invoke: %v", shape.Name, err)
					}
					got, err := receivertest.ReadLambdaResponse(out)
					if err != nil {
						t.Fatalf("%s: %v", shape.Name, err)
					}
					return got
				}
				got := invoke(c)
				observed[got.Status] = true
				t.Run(shape.Name, func(t *testing.T) { receivertest.Check(t, c, got, want) })
				if after := invoke(health); after.Status != 200 {
					t.Fatalf("%s: the handler no longer serves: %d %s", shape.Name, after.Status, after.Body)
				}
			}
			status := want.Status
			if len(observed) != 1 || !observed[status] {
				status = -1
			}
			table.Add(badinput.Row{Input: c.Name, Request: c.Method + " " + c.Path, Expected: c.Status, Observed: status,
				Answer: badinput.Answer{Body: want.Body}.Message() + fmt.Sprintf(" (all %d event shapes)", len(receivertest.Shapes))})
		})
	}
	table.Finish(t, ran == len(cases))
}
