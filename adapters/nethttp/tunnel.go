package nethttp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/robothub/robothub/core/procgroup"
)

// tunnelStartTimeout bounds the wait for a tunnel's public URL.
const tunnelStartTimeout = 45 * time.Second

// Tunnel exposes a local server at a public https address, so that the hub can deliver to a laptop.
type Tunnel interface {
	// Open starts forwarding public traffic to localURL and returns the public base URL.
	Open(ctx context.Context, localURL string) (publicURL string, err error)
	// Close stops forwarding.
	Close() error
	// Name says which provider this is, for messages.
	Name() string
}

// CommandTunnel runs an external tunnel program, such as `cloudflared tunnel --url {url}`, and takes
// the first public https origin it prints (on stdout or stderr) as the public URL. In the
// arguments, {url} is replaced by the local URL, {port} by its port and {host} by its host.
type CommandTunnel struct {
	Argv []string
	// URLPattern, if set, picks the public URL from the program's output; the first match (or its
	// first group) wins. By default the first https:// URL with no path does.
	URLPattern *regexp.Regexp
	Logger     *slog.Logger

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// defaultTunnelURL matches a bare https origin: the tunnel's, not the provider's documentation links.
var defaultTunnelURL = regexp.MustCompile(`https://[A-Za-z0-9.-]+(?::\d+)?(?:/)?(?:[\s"'|]|$)`)

// Name implements Tunnel.
func (t *CommandTunnel) Name() string {
	if len(t.Argv) == 0 {
		return "command"
	}
	return t.Argv[0]
}

// Open implements Tunnel.
func (t *CommandTunnel) Open(ctx context.Context, localURL string) (string, error) {
	if len(t.Argv) == 0 {
		return "", errors.New("tunnel command is empty")
	}
	u, err := url.Parse(localURL)
	if err != nil {
		return "", err
	}
	args := make([]string, len(t.Argv))
	for i, a := range t.Argv {
		args[i] = strings.NewReplacer("{url}", localURL, "{port}", u.Port(), "{host}", u.Hostname()).Replace(a)
	}
	log := t.Logger
	if log == nil {
		log = slog.Default()
	}
	cmd := exec.Command(args[0], args[1:]...)
	procgroup.Isolate(cmd)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("start %s: %w", args[0], err)
	}
	done := make(chan struct{})
	t.mu.Lock()
	t.cmd, t.done = cmd, done
	t.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		pw.Close()
		close(done)
	}()

	found := make(chan string, 1)
	scanned := make(chan struct{})
	var tail []string // the last lines, to explain a failure
	var tailMu sync.Mutex
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			log.Debug("tunnel output", "line", line)
			tailMu.Lock()
			if tail = append(tail, line); len(tail) > 8 {
				tail = tail[1:]
			}
			tailMu.Unlock()
			if !sent {
				if u := t.match(line); u != "" {
					found <- u
					sent = true
				}
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()

	select {
	case u := <-found:
		return u, nil
	case <-done:
		<-scanned // the pipe is closed: the last lines are in
		tailMu.Lock()
		defer tailMu.Unlock()
		return "", fmt.Errorf("%s exited before printing a public https URL (%s); its last output:\n  %s",
			args[0], cmd.ProcessState, strings.Join(tail, "\n  "))
	case <-ctx.Done():
		_ = t.Close()
		return "", fmt.Errorf("%s printed no public https URL in time: %w", args[0], ctx.Err())
	}
}

func (t *CommandTunnel) match(line string) string {
	if t.URLPattern != nil {
		m := t.URLPattern.FindStringSubmatch(line)
		switch {
		case len(m) > 1:
			return strings.TrimRight(m[1], "/")
		case len(m) == 1:
			return strings.TrimRight(m[0], "/")
		}
		return ""
	}
	m := defaultTunnelURL.FindString(line)
	return strings.TrimRight(strings.TrimRight(m, " \t\"'|"), "/")
}

// Close stops the tunnel program: SIGTERM to its process group, then SIGKILL after 3 seconds.
func (t *CommandTunnel) Close() error {
	t.mu.Lock()
	cmd, done := t.cmd, t.done
	t.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return nil
	}
	_ = procgroup.Signal(cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		_ = procgroup.Kill(cmd.Process.Pid)
		<-done
	}
	return nil
}
