package httpapi

import (
	"bytes"
	"net/http"
	"time"
)

// sseWriteTimeout drops a stream whose client stopped reading.
const sseWriteTimeout = 5 * time.Second

// EventStream writes server-sent events.
type EventStream struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// StartStream answers 200 with the event stream's headers and returns the stream.
func StartStream(w http.ResponseWriter) *EventStream {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &EventStream{w: w, rc: http.NewResponseController(w)}
	_ = s.rc.Flush()
	return s
}

// Send writes one event; data must hold no newline (JSON from encoding/json never does).
func (s *EventStream) Send(event string, data []byte) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	var b bytes.Buffer
	if event != "" {
		b.WriteString("event: ")
		b.WriteString(event)
		b.WriteByte('\n')
	}
	b.WriteString("data: ")
	b.Write(bytes.ReplaceAll(data, []byte("\n"), []byte(" ")))
	b.WriteString("\n\n")
	if _, err := s.w.Write(b.Bytes()); err != nil {
		return err
	}
	return s.rc.Flush()
}
