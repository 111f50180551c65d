package lambda

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/testkit/receivertest"
)

// BenchmarkInvoke measures the Lambda path of one delivery, event JSON in to response JSON out: a
// 1 KiB hub payload, the secret checked, a handler that does nothing, the delivery logged (as JSON,
// to nowhere). It is the per-invoke overhead the function adds to the handler's own work. Besides
// ns/op (wall time) it reports cpu-ns/op, the process's CPU time per invocation.
func BenchmarkInvoke(b *testing.B) {
	payload := kibPayload(b)
	srv := webhook.NewServer(webhook.WithSecret(receivertest.Secret),
		webhook.WithLogger(slog.New(slog.NewJSONHandler(io.Discard, nil))))
	if err := srv.Add("hello", func(context.Context, *webhook.Payload, http.Header) (any, error) { return nil, nil }); err != nil {
		b.Fatal(err)
	}
	c := receivertest.Case{Method: "POST", Path: "/webhooks/hello", Body: payload,
		Header: map[string]string{"x-webhook-secret": receivertest.Secret, "content-type": "application/json"}}
	for _, shape := range receivertest.Shapes {
		event, err := receivertest.LambdaEvent(shape.Event(), c)
		if err != nil {
			b.Fatal(err)
		}
		h := NewHandler(srv, WithBasePath(shape.BasePath))
		b.Run(shape.Name, func(b *testing.B) {
			ctx := context.Background()
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			cpu := processCPUTime()
			for b.Loop() {
				out, err := h.Invoke(ctx, event)
				if err != nil || !bytes.Contains(out, []byte(`"statusCode":200`)) {
					b.Fatalf("%v %s", err, out)
				}
			}
			if used := processCPUTime() - cpu; used > 0 {
				// The CPU time per invocation, all goroutines and the GC included, without the time
				// spent waiting for a core: on a busy shared machine, steadier than ns/op.
				b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

// kibPayload is a real hub payload, compacted and padded with trailing spaces to 1024 bytes.
func kibPayload(b *testing.B) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, receivertest.Payload); err != nil {
		b.Fatal(err)
	}
	if buf.Len() > 1024 {
		b.Fatalf("payload is %d bytes", buf.Len())
	}
	return append(buf.Bytes(), bytes.Repeat([]byte(" "), 1024-buf.Len())...)
}
