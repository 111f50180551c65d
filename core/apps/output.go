package apps

import "sync"

// maxOutputLines bounds the output an app run keeps for readers that join late (the dashboard's
// log view); older lines are dropped, and a reader that fell behind skips them.
const maxOutputLines = 2000

// OutputLine is one line an app wrote, on "stdout" or "stderr".
type OutputLine struct {
	Stream string `json:"stream"`
	Line   string `json:"line"`
}

// OutputLog is the output of one app run: its last lines, numbered from 0 since the start, and
// whether the run has ended (its pipes are closed).
type OutputLog struct {
	mu      sync.Mutex
	first   int // the number of lines[0]
	lines   []OutputLine
	ended   bool
	changed chan struct{} // closed and replaced on every change
}

func newOutputLog() *OutputLog { return &OutputLog{changed: make(chan struct{})} }

func (o *OutputLog) add(stream, line string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lines = append(o.lines, OutputLine{Stream: stream, Line: line})
	if drop := len(o.lines) - maxOutputLines; drop > 0 {
		o.lines = append(o.lines[:0], o.lines[drop:]...)
		o.first += drop
	}
	close(o.changed)
	o.changed = make(chan struct{})
}

func (o *OutputLog) end() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ended = true
	close(o.changed)
	o.changed = make(chan struct{})
}

// Follow returns the lines numbered from on (from the oldest kept one when those are gone), the
// number to ask for next, whether the run has ended, and a channel closed at the next change: a
// streaming reader calls it in a loop until ended.
func (o *OutputLog) Follow(from int) (lines []OutputLine, next int, ended bool, changed <-chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if from < o.first {
		from = o.first
	}
	if i := from - o.first; i < len(o.lines) {
		lines = append([]OutputLine(nil), o.lines[i:]...)
	}
	return lines, o.first + len(o.lines), o.ended, o.changed
}

// Output returns the output log of the current app run, or of the last one when it ended by itself
// (nil when Status is nil), with that run's status.
func (m *Manager) Output() (*OutputLog, *AppStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.current == nil {
		return nil, nil
	}
	st := m.current.statusLocked()
	return m.current.output, &st
}
