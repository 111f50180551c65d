package actions

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/robothub/robothub/internal/testkit/syncbuf"
)

// TestBufferedOutputWritesWithinInterval: a line reaches the underlying writer once it has waited
// OutputFlushInterval, with no other write to push it; the lines of that interval go in one write.
func TestBufferedOutputWritesWithinInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var under countingWriter
		out := NewBufferedOutput(&under)
		defer out.Close()
		mustWrite(t, out, "one\n")
		time.Sleep(OutputFlushInterval / 2)
		mustWrite(t, out, "two\n")
		synctest.Wait()
		if got := under.String(); got != "" {
			t.Fatalf("written before the interval passed: %q", got)
		}
		time.Sleep(OutputFlushInterval / 2)
		synctest.Wait()
		if got, writes := under.String(), under.writes(); got != "one\ntwo\n" || writes != 1 {
			t.Fatalf("after the interval: %q in %d writes, want both lines in one", got, writes)
		}
		mustWrite(t, out, "three\n")
		time.Sleep(OutputFlushInterval)
		synctest.Wait()
		if got := under.String(); got != "one\ntwo\nthree\n" {
			t.Fatalf("a line after a quiet spell: %q", got)
		}
	})
}

// TestBufferedOutputFullBuffer: lines that fill the buffer are written without waiting, whole.
func TestBufferedOutputFullBuffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var under countingWriter
		out := NewBufferedOutput(&under)
		line := strings.Repeat("x", 1000) + "\n"
		for range outputBufferSize/len(line) + 1 {
			mustWrite(t, out, line)
		}
		if got := len(under.String()); got == 0 || got%len(line) != 0 {
			t.Fatalf("a full buffer wrote %d bytes, want whole lines at once", got)
		}
		big := strings.Repeat("y", 2*outputBufferSize) + "\n"
		mustWrite(t, out, big)
		if !strings.HasSuffix(under.String(), big) {
			t.Error("a line bigger than the buffer was not written through at once")
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestBufferedOutputClose: Close writes what is left, and later writes go straight through.
func TestBufferedOutputClose(t *testing.T) {
	var under countingWriter
	out := NewBufferedOutput(&under)
	mustWrite(t, out, "kept\n")
	if err := out.Close(); err != nil || under.String() != "kept\n" {
		t.Fatalf("Close: %v, wrote %q", err, under.String())
	}
	mustWrite(t, out, "late\n")
	if under.String() != "kept\nlate\n" {
		t.Fatalf("a write after Close: %q", under.String())
	}
}

// TestBufferedOutputFailingWriter: a write of the buffer that fails is reported to the next line's
// writer, and the lines after it are written when the writer works again.
func TestBufferedOutputFailingWriter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		under := &countingWriter{fail: errors.New("no space left on device")}
		out := NewBufferedOutput(under)
		mustWrite(t, out, "lost\n")
		time.Sleep(OutputFlushInterval)
		synctest.Wait()
		if _, err := out.Write([]byte("next\n")); err == nil || !strings.Contains(err.Error(), "no space left") {
			t.Fatalf("the write after a failed one: %v, want the failure", err)
		}
		under.setFail(nil)
		mustWrite(t, out, "again\n")
		if err := out.Close(); err != nil || under.String() != "again\n" {
			t.Fatalf("after the writer recovered: %v, wrote %q", err, under.String())
		}
	})
}

// TestBufferedOutputConcurrentLines: lines written at once by many deliveries all arrive, whole.
func TestBufferedOutputConcurrentLines(t *testing.T) {
	var under countingWriter
	out := NewBufferedOutput(&under)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				mustWrite(t, out, fmt.Sprintf("{\"g\":%d,\"i\":%d,\"pad\":%q}\n", g, i, strings.Repeat("z", 300)))
			}
		})
	}
	wg.Wait()
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(under.String(), "\n"), "\n")
	seen := map[string]bool{}
	for _, l := range lines {
		if !strings.HasPrefix(l, `{"g":`) || !strings.HasSuffix(l, `"}`) {
			t.Fatalf("a broken line: %.80q", l)
		}
		seen[l] = true
	}
	if len(lines) != 8*500 || len(seen) != 8*500 {
		t.Fatalf("%d lines (%d distinct), want %d", len(lines), len(seen), 8*500)
	}
}

func mustWrite(t *testing.T, out *BufferedOutput, s string) {
	t.Helper()
	if n, err := out.Write([]byte(s)); err != nil || n != len(s) {
		t.Fatalf("Write(%.20q) = %d, %v", s, n, err)
	}
}

// countingWriter is a writer that counts its writes, and fails them while fail is set.
type countingWriter struct {
	mu   sync.Mutex
	buf  syncbuf.Buffer
	n    int
	fail error
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fail != nil {
		return 0, w.fail
	}
	w.n++
	return w.buf.Write(p)
}

func (w *countingWriter) setFail(err error) { w.mu.Lock(); w.fail = err; w.mu.Unlock() }
func (w *countingWriter) writes() int       { w.mu.Lock(); defer w.mu.Unlock(); return w.n }
func (w *countingWriter) String() string    { return w.buf.String() }
