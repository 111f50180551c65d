//go:build linux

// Package fakesystemd plays systemd's part for a Type=notify service in tests: it starts the
// program with NOTIFY_SOCKET and WATCHDOG_USEC, reads READY=1 and WATCHDOG=1 on a unixgram socket
// as systemd does, kills the service when it is not ready within TimeoutStart or misses its
// watchdog (SIGABRT), and restarts it after RestartDelay when it fails (Restart=on-failure). The
// daemon under test speaks the same protocol as under the real unit.
package fakesystemd

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Unit is the part of a service unit this supervisor honours.
type Unit struct {
	Argv         []string
	Env          []string      // besides NOTIFY_SOCKET and WATCHDOG_USEC
	TimeoutStart time.Duration // the unit's TimeoutStartSec=; default 90s
	Watchdog     time.Duration // WatchdogSec=; 0: no watchdog
	RestartDelay time.Duration // RestartSec=; default 100ms
	Output       io.Writer     // the service's stdout and stderr (the journal)
}

// Event is something the supervisor saw or did.
type Event struct {
	Time   time.Time
	Kind   string // start, ready, watchdog-timeout, start-timeout, exit
	PID    int
	Detail string
}

// Service is a supervised program.
type Service struct {
	t    testing.TB
	unit Unit
	sock *net.UnixConn

	mu       sync.Mutex
	events   []Event
	cmd      *exec.Cmd
	ready    bool
	lastPing time.Time
	started  time.Time
	stopping bool
	changed  chan struct{}
	done     chan struct{}
}

// Start starts the service; the test's end stops it.
func Start(t testing.TB, u Unit) *Service {
	t.Helper()
	if u.TimeoutStart == 0 {
		u.TimeoutStart = 90 * time.Second
	}
	if u.RestartDelay == 0 {
		u.RestartDelay = 100 * time.Millisecond
	}
	dir, err := os.MkdirTemp("", "fakesystemd-")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "notify")
	sock, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{t: t, unit: u, sock: sock, changed: make(chan struct{}), done: make(chan struct{})}
	go s.readNotifications()
	s.spawn()
	go s.supervise()
	t.Cleanup(func() {
		s.Stop()
		sock.Close()
		os.RemoveAll(dir)
	})
	return s
}

func (s *Service) note(kind string, pid int, detail string) {
	s.events = append(s.events, Event{Time: time.Now(), Kind: kind, PID: pid, Detail: detail})
	close(s.changed)
	s.changed = make(chan struct{})
}

// spawn starts the program. Call with s.mu not held.
func (s *Service) spawn() {
	cmd := exec.Command(s.unit.Argv[0], s.unit.Argv[1:]...)
	cmd.Env = append(append(os.Environ(), s.unit.Env...), "NOTIFY_SOCKET="+s.sock.LocalAddr().String())
	if s.unit.Watchdog > 0 {
		cmd.Env = append(cmd.Env, "WATCHDOG_USEC="+strconv.FormatInt(s.unit.Watchdog.Microseconds(), 10))
	}
	cmd.Stdout, cmd.Stderr = s.unit.Output, s.unit.Output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := cmd.Start(); err != nil {
		s.note("exit", 0, "exec: "+err.Error())
		return
	}
	s.cmd, s.ready, s.started = cmd, false, time.Now()
	s.note("start", cmd.Process.Pid, "")
	go func() {
		err := cmd.Wait()
		s.mu.Lock()
		detail := "status 0"
		if err != nil {
			detail = err.Error()
		}
		s.note("exit", cmd.Process.Pid, detail)
		failed := err != nil
		stopping := s.stopping
		if s.cmd == cmd {
			s.cmd = nil
		}
		s.mu.Unlock()
		// The process group goes with its leader, as KillMode=mixed does at the end.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if stopping || !failed {
			return
		}
		time.Sleep(s.unit.RestartDelay)
		s.mu.Lock()
		stop := s.stopping
		s.mu.Unlock()
		if !stop {
			s.spawn()
		}
	}()
}

func (s *Service) readNotifications() {
	buf := make([]byte, 4096)
	for {
		n, err := s.sock.Read(buf)
		if err != nil {
			return
		}
		s.mu.Lock()
		pid := 0
		if s.cmd != nil {
			pid = s.cmd.Process.Pid
		}
		for _, line := range strings.Split(string(buf[:n]), "\n") {
			switch line {
			case "READY=1":
				s.ready, s.lastPing = true, time.Now()
				s.note("ready", pid, "")
			case "WATCHDOG=1":
				s.lastPing = time.Now()
			}
		}
		s.mu.Unlock()
	}
}

// supervise enforces the start timeout and the watchdog.
func (s *Service) supervise() {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		s.mu.Lock()
		cmd, now := s.cmd, time.Now()
		var kill string
		switch {
		case cmd == nil || s.stopping:
		case !s.ready && now.Sub(s.started) > s.unit.TimeoutStart:
			kill = "start-timeout"
		case s.ready && s.unit.Watchdog > 0 && now.Sub(s.lastPing) > s.unit.Watchdog:
			kill = "watchdog-timeout"
		}
		if kill != "" {
			s.note(kill, cmd.Process.Pid, "")
			s.ready = false
			_ = cmd.Process.Signal(syscall.SIGABRT)
			s.cmd = nil // its exit restarts it
		}
		s.mu.Unlock()
	}
}

// Stop stops the service as systemctl stop does (SIGTERM, then SIGKILL after 40 s) and waits.
func (s *Service) Stop() {
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		return
	}
	s.stopping = true
	close(s.done)
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	deadline := time.Now().Add(40 * time.Second)
	for processAlive(cmd.Process.Pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

func processAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// Events returns what happened so far.
func (s *Service) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event{}, s.events...)
}

// Wait waits until cond holds of the events, or fails the test after timeout.
func (s *Service) Wait(timeout time.Duration, what string, cond func([]Event) bool) []Event {
	s.t.Helper()
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		evs, changed := append([]Event{}, s.events...), s.changed
		s.mu.Unlock()
		if cond(evs) {
			return evs
		}
		select {
		case <-changed:
		case <-deadline:
			s.t.Fatalf("after %s, not %s; events:\n%s", timeout, what, Format(evs))
		}
	}
}

// Count returns how many events of kind there are.
func Count(evs []Event, kind string) int {
	n := 0
	for _, e := range evs {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// Format lists events, one a line.
func Format(evs []Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%s %-16s pid %d %s\n", e.Time.Format("15:04:05.000"), e.Kind, e.PID, e.Detail)
	}
	return b.String()
}
