package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/internal/hubemu/spaces"
)

// Repos is where the spaces' bare repositories live: <root>/spaces/<owner>/<name>.git. git runs
// with no system or global configuration, so that the hub does not depend on the machine's.
type Repos struct {
	root          string // the directory of repositories
	git           string // the git program
	removeOnClose bool   // root is a temporary directory

	findBackend sync.Once
	backend     string // git-http-backend, found through git --exec-path
	backendErr  error
}

var _ spaces.Git = (*Repos)(nil)

// Open prepares root (made if missing) for the spaces' repositories. gitPath is the git program
// ("" is git on PATH). A temporary root is removed by Close.
func Open(root, gitPath string, temporary bool) (*Repos, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("making the directory of the spaces' repositories: %w", err)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if gitPath == "" {
		gitPath = "git"
	}
	return &Repos{root: abs, git: gitPath, removeOnClose: temporary}, nil
}

// Close removes a temporary root.
func (g *Repos) Close() error {
	if g.removeOnClose {
		return os.RemoveAll(g.root)
	}
	return nil
}

// Root is the directory of repositories.
func (g *Repos) Root() string { return g.root }

// TempDir is where large bodies wait: the repositories' own directory, on their disk.
func (g *Repos) TempDir() string { return g.root }

// projectRoot is GIT_PROJECT_ROOT of git http-backend.
func (g *Repos) projectRoot() string { return filepath.Join(g.root, "spaces") }

// Dir is the bare repository of the space owner/name (already validated).
func (g *Repos) Dir(space string) string {
	owner, name, _ := strings.Cut(space, "/")
	return filepath.Join(g.projectRoot(), owner, name+".git")
}

// env is the environment of every git process the hub starts.
func (g *Repos) env() []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	return []string{
		"PATH=" + path,
		"HOME=" + g.root,
		"LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_TERMINAL_PROMPT=0",
	}
}

// Available reports whether git and its git-http-backend are installed.
func (g *Repos) Available() error {
	_, err := g.httpBackend()
	return err
}

// httpBackend returns the path of git-http-backend.
func (g *Repos) httpBackend() (string, error) {
	g.findBackend.Do(func() {
		// Not a request's context: a cancelled request must not make the answer stick.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := g.run(ctx, "", nil, "--exec-path")
		if err != nil {
			g.backendErr = &fault.Error{Kind: fault.Unavailable, Msg: fmt.Sprintf("spaces need git (and its git-http-backend): %v", err)}
			return
		}
		p := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
		if _, err := os.Stat(p); err != nil {
			g.backendErr = &fault.Error{Kind: fault.Unavailable, Msg: "spaces need git-http-backend, which is not at " + p}
			return
		}
		g.backend = p
	})
	return g.backend, g.backendErr
}

// run runs git in dir (none: the current directory) with stdin, and returns its standard output.
func (g *Repos) run(ctx context.Context, dir string, stdin *bytes.Reader, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, g.git, args...)
	cmd.Dir = dir
	cmd.Env = g.env()
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, fmt.Errorf("%s is not installed (or not on PATH)", g.git)
		}
		return nil, gitFailed(args[0], err, stderr.String())
	}
	return stdout.Bytes(), nil
}

func gitFailed(what string, err error, stderr string) error {
	msg := strings.TrimSpace(stderr)
	if len(msg) > 500 {
		msg = msg[:500] + "..."
	}
	if msg != "" {
		return fmt.Errorf("git %s: %w: %s", what, err, msg)
	}
	return fmt.Errorf("git %s: %w", what, err)
}

// Create makes an empty bare repository whose HEAD is main, replacing whatever an earlier failure
// may have left at its place. Every object a push brings is checked (receive.fsckObjects), and a
// tree entry that a filesystem would read as .git (hasDotgit, which fsck only warns about) refuses
// the push too.
func (g *Repos) Create(ctx context.Context, space string) error {
	dir := g.Dir(space)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	if _, err := g.run(ctx, "", nil, "init", "--quiet", "--bare", "--initial-branch=main", dir); err != nil {
		return err
	}
	for _, kv := range [][2]string{
		{"receive.fsckObjects", "true"},
		{"receive.fsck.hasDotgit", "error"},
	} {
		if _, err := g.run(ctx, dir, nil, "config", kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}

// Remove deletes a space's repository.
func (g *Repos) Remove(space string) error { return os.RemoveAll(g.Dir(space)) }
