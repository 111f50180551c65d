package actions

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// OutputFlushInterval is how long a line may wait in a BufferedOutput before it is written.
const OutputFlushInterval = 5 * time.Millisecond

// outputBufferSize is a BufferedOutput's buffer: a full one is written at once, without waiting.
const outputBufferSize = 64 << 10

// BufferedOutput is the log route's output for a long-running receiver (robothub serve): lines
// are gathered in memory and written to the underlying writer when OutputFlushInterval has passed
// since the first unwritten one, when the buffer fills, and on Close. A write(2) per line was a
// tenth of `robothub serve --route bench=log`'s CPU under wrk (pprof: os.(*File).Write 0.58 s of
// 6.46 s); at 20,000 deliveries a second this writes about 100 lines per system call.
//
// What this costs, decided: a delivery is answered once its line is in the buffer, so a receiver
// killed (SIGKILL, a power cut, a crash of the Go runtime) loses the lines of its last 5 ms, at
// most 64 KiB of them, which the hub was told were logged and will not send again. SIGINT and
// SIGTERM lose nothing: serve stops taking deliveries, then Close writes the rest. Function
// receivers (Lambda, Cloud Functions) write each line at once instead: their process is frozen
// or ended between invocations, with a timer that would not run.
//
// Lines written by one Write stay whole. A write that fails drops what the buffer held and is
// reported to the next Write, so a delivery learns that the output is failing; the writes after
// it are tried again.
type BufferedOutput struct {
	mu     sync.Mutex
	out    io.Writer
	buf    *bufio.Writer
	timer  *time.Timer
	armed  bool // the timer runs: the buffer holds a line
	err    error
	closed bool
}

// NewBufferedOutput returns a BufferedOutput writing to w. Close it to write what it holds.
func NewBufferedOutput(w io.Writer) *BufferedOutput {
	b := &BufferedOutput{out: w, buf: bufio.NewWriterSize(w, outputBufferSize)}
	b.timer = time.AfterFunc(time.Hour, b.flushDue)
	b.timer.Stop()
	return b
}

// Write adds p to the buffer (writing the buffer first when p does not fit), or returns the error
// of a write of earlier lines that failed.
func (b *BufferedOutput) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.err; err != nil {
		b.err = nil
		return 0, err
	}
	if b.closed {
		return b.out.Write(p)
	}
	if len(p) > b.buf.Available() && b.buf.Buffered() > 0 {
		if err := b.flushLocked(); err != nil {
			b.err = nil
			return 0, err
		}
	}
	n, err := b.buf.Write(p) // a p bigger than the buffer goes straight through
	if err != nil {
		b.buf.Reset(b.out)
		return n, err
	}
	if !b.armed && b.buf.Buffered() > 0 {
		b.armed = true
		b.timer.Reset(OutputFlushInterval)
	}
	return n, nil
}

// flushDue is the timer's: the oldest buffered line has waited OutputFlushInterval.
func (b *BufferedOutput) flushDue() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.armed = false
	_ = b.flushLocked() // kept in b.err for the next Write
}

func (b *BufferedOutput) flushLocked() error {
	if err := b.buf.Flush(); err != nil {
		b.buf.Reset(b.out) // bufio's error would stick: drop the lines and try the next ones
		b.err = err
		return err
	}
	return nil
}

// Flush writes what the buffer holds now.
func (b *BufferedOutput) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	err := b.flushLocked()
	b.err = nil
	return err
}

// Close writes what the buffer holds; later writes go straight to the underlying writer.
func (b *BufferedOutput) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.timer.Stop()
	b.armed, b.closed = false, true
	err := b.flushLocked()
	b.err = nil
	return err
}
