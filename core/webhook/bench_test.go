package webhook

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkServeHTTP is the receiver's own cost per delivery: secret check, body read, parse,
// handler call and JSON reply, without the network.
func BenchmarkServeHTTP(b *testing.B) {
	raw := loadPayloads(b)["discussion-create-pr.json"]
	for _, tc := range []struct {
		name string
		log  io.Writer
	}{{"no-log", nil}, {"log-to-discard", io.Discard}} {
		b.Run(tc.name, func(b *testing.B) {
			var logger *slog.Logger
			if tc.log != nil {
				logger = slog.New(slog.NewTextHandler(tc.log, nil))
			} else {
				logger = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError}))
			}
			s := NewServer(WithSecret("bench-secret"), WithLogger(logger))
			_ = s.Add("bench", func(context.Context, *Payload, http.Header) (any, error) { return nil, nil })
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				req := httptest.NewRequest("POST", "/webhooks/bench", bytes.NewReader(raw))
				req.Header.Set(SecretHeader, "bench-secret")
				w := httptest.NewRecorder()
				s.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatal(w.Code, w.Body.String())
				}
			}
		})
	}
}
