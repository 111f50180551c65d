package actions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/procgroup"
	"github.com/robothub/robothub/core/webhook"
)

// maxEnvPayload is the largest payload passed in WEBHOOK_PAYLOAD. Linux refuses to start a program
// with a single environment string over 128 KiB; bigger payloads are on stdin only.
const maxEnvPayload = 120 << 10

// ExecResult is the reply of a successful exec action.
type ExecResult struct {
	Message  string `json:"message"`
	ExitCode int    `json:"exitCode"`
	Duration string `json:"duration"`
}

// lookPathProblem says, once and in words, why the program of an exec: route cannot be run:
// exec.LookPath's own text repeats the prefix ("exec: exec: \"./x\": stat ./x: ...").
func lookPathProblem(name string, err error) string {
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return fmt.Sprintf("%s is not a program on PATH; give its path (./%s for one in the working directory)", name, name)
	case errors.Is(err, fs.ErrNotExist):
		where, _ := os.Getwd()
		if filepath.IsAbs(name) {
			return fmt.Sprintf("%s does not exist", name)
		}
		return fmt.Sprintf("%s does not exist (relative to the working directory %s)", name, where)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("%s is not executable (chmod +x %s)", name, name)
	}
	var ee *exec.Error
	if errors.As(err, &ee) {
		return fmt.Sprintf("%s: %v", name, ee.Err)
	}
	return err.Error()
}

func (b *Builder) execAction(route, spec string) (webhook.HandlerFunc, error) {
	if b.cfg.SplitCommand == nil {
		return nil, fmt.Errorf("route %s: exec: %w", route, ErrNoExec)
	}
	argv, err := b.cfg.SplitCommand(spec)
	if err != nil {
		return nil, fmt.Errorf("route %s: exec: %w", route, err)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, fmt.Errorf("route %s: exec: %s", route, lookPathProblem(argv[0], err))
	}
	env := execEnviron(b.cfg.Getenv, b.cfg.ExecEnv)
	log := b.cfg.Logger.With("route", route, "command", argv[0])

	return func(ctx context.Context, p *webhook.Payload, _ http.Header) (any, error) {
		select {
		case b.execCap <- struct{}{}:
			defer func() { <-b.execCap }()
		case <-ctx.Done():
			return nil, fault.New(fault.Unavailable, "all %d command slots stayed busy; try again later", cap(b.execCap))
		}
		// The command is bounded by its own timeout, not by the caller: a hub that stops waiting
		// does not kill a build halfway.
		runCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.cfg.ExecTimeout)
		defer cancel()

		cmd := exec.CommandContext(runCtx, path, argv[1:]...)
		cmd.Args[0] = argv[0]
		cmd.Env = append(slices.Clip(env), payloadEnv(route, p)...)
		cmd.Stdin = bytes.NewReader(p.Raw)
		out := &tailBuffer{limit: b.cfg.ExecOutputLimit}
		cmd.Stdout, cmd.Stderr = out, out
		procgroup.KillOnCancel(cmd)
		cmd.WaitDelay = 2 * time.Second

		start := time.Now()
		err := cmd.Run()
		took := time.Since(start).Round(time.Millisecond)
		code := cmd.ProcessState.ExitCode()
		attrs := []any{"exit_code", code, "duration", took, "output", out.String()}
		switch {
		case runCtx.Err() == context.DeadlineExceeded:
			log.Error("command timed out and was killed", attrs...)
			return nil, fault.New(fault.Timeout, "command %s was killed after the %s timeout", argv[0], b.cfg.ExecTimeout)
		case err != nil && errors.As(err, new(*exec.ExitError)):
			log.Error("command failed", attrs...)
			return nil, fmt.Errorf("command %s exited with status %d", argv[0], code)
		case err != nil:
			log.Error("command did not run", append(attrs, "err", err.Error())...)
			return nil, fmt.Errorf("command %s did not run: %v", argv[0], err)
		}
		log.Info("command ran", attrs...)
		return ExecResult{Message: fmt.Sprintf("%s exited with status 0", argv[0]), ExitCode: 0, Duration: took.String()}, nil
	}, nil
}

// payloadEnv describes the delivery to a command. A payload string may hold a NUL (JSON's
// \u0000), which no environment variable can: it becomes U+FFFD in the variable, so that the
// command still starts (the exact text is in WEBHOOK_PAYLOAD, where it is still escaped).
func payloadEnv(route string, p *webhook.Payload) []string {
	env := []string{
		"WEBHOOK_ROUTE=" + envValue(route),
		"WEBHOOK_EVENT_SCOPE=" + envValue(p.Event.Scope),
		"WEBHOOK_EVENT_ACTION=" + envValue(p.Event.Action),
		"WEBHOOK_REPO_TYPE=" + envValue(p.Repo.Type),
		"WEBHOOK_REPO_NAME=" + envValue(p.Repo.Name),
	}
	if len(p.Raw) <= maxEnvPayload && bytes.IndexByte(p.Raw, 0) < 0 {
		env = append(env, "WEBHOOK_PAYLOAD="+string(p.Raw))
	}
	return env
}

func envValue(s string) string { return strings.ReplaceAll(s, "\x00", "\uFFFD") }

// tailBuffer keeps the last limit bytes written to it.
type tailBuffer struct {
	mu    sync.Mutex
	buf   []byte
	limit int
	cut   bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.limit; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimRight(string(t.buf), "\n")
	if t.cut {
		s = "..." + s
	}
	return s
}
