// Package syncbuf is a bytes.Buffer that a process, a server or a logger may write while a test
// reads it. It has no other dependency and does nothing at init, so any test binary can use it,
// including the ones testscript re-runs as a command outside the repository.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is safe for one writer and concurrent readers, or several writers.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
