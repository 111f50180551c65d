package hubemu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/robothub/robothub/core/fault"
)

// mainRef is the branch whose head is a space's headSha and whose README gives its tags.
const mainRef = "refs/heads/main"

// gitRepos is where the spaces' bare git repositories live: <root>/spaces/<owner>/<name>.git. It runs
// git with no system or global configuration, so that the emulator's behaviour does not depend on
// the machine's.
type gitRepos struct {
	root          string // the directory of repositories
	git           string // the git program
	removeOnClose bool   // root is a temporary directory of an in-memory emulator

	findBackend sync.Once
	backend     string // git-http-backend, found through git --exec-path
	backendErr  error

	mu    sync.Mutex
	locks map[string]*sync.Mutex // per space: creation, deletion and each push are serialised
}

func newGitRepos(root, git string, removeOnClose bool) *gitRepos {
	if git == "" {
		git = "git"
	}
	return &gitRepos{root: root, git: git, removeOnClose: removeOnClose, locks: map[string]*sync.Mutex{}}
}

func (g *gitRepos) close() error {
	if g.removeOnClose {
		return os.RemoveAll(g.root)
	}
	return nil
}

// projectRoot is GIT_PROJECT_ROOT of git http-backend.
func (g *gitRepos) projectRoot() string { return filepath.Join(g.root, "spaces") }

// dir is the bare repository of the space owner/name (already validated).
func (g *gitRepos) dir(fullName string) string {
	owner, name, _ := strings.Cut(fullName, "/")
	return filepath.Join(g.projectRoot(), owner, name+".git")
}

// lock returns the lock of one space.
func (g *gitRepos) lock(fullName string) *sync.Mutex {
	g.mu.Lock()
	defer g.mu.Unlock()
	l := g.locks[fullName]
	if l == nil {
		l = &sync.Mutex{}
		g.locks[fullName] = l
	}
	return l
}

// env is the environment of every git process the emulator starts.
func (g *gitRepos) env() []string {
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

// httpBackend returns the path of git-http-backend.
func (g *gitRepos) httpBackend() (string, error) {
	g.findBackend.Do(func() {
		// Not the request's context: a cancelled request must not make the answer stick.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := g.run(ctx, "", "--exec-path")
		if err != nil {
			g.backendErr = errorf(fault.Unavailable, "spaces need git (and its git-http-backend): %v", err)
			return
		}
		p := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
		if _, err := os.Stat(p); err != nil {
			g.backendErr = errorf(fault.Unavailable, "spaces need git-http-backend, which is not at %s", p)
			return
		}
		g.backend = p
	})
	return g.backend, g.backendErr
}

// run runs git in dir (none: the current directory) and returns its standard output.
func (g *gitRepos) run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, g.git, args...)
	cmd.Dir = dir
	cmd.Env = g.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 500 {
			msg = msg[:500] + "..."
		}
		if errors.Is(err, exec.ErrNotFound) {
			return nil, fmt.Errorf("%s is not installed (or not on PATH)", g.git)
		}
		if msg != "" {
			return nil, fmt.Errorf("git %s: %w: %s", args[0], err, msg)
		}
		return nil, fmt.Errorf("git %s: %w", args[0], err)
	}
	return stdout.Bytes(), nil
}

// create makes an empty bare repository whose HEAD is main, replacing whatever an earlier failure
// may have left at its place.
func (g *gitRepos) create(ctx context.Context, fullName string) error {
	dir := g.dir(fullName)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	if _, err := g.run(ctx, "", "init", "--quiet", "--bare", "--initial-branch=main", dir); err != nil {
		return err
	}
	// Check every object a push brings; a broken push is refused and changes nothing.
	_, err := g.run(ctx, dir, "config", "receive.fsckObjects", "true")
	return err
}

func (g *gitRepos) remove(fullName string) error { return os.RemoveAll(g.dir(fullName)) }

// refs returns every ref of a repository and the commit (or object) it points at.
func (g *gitRepos) refs(ctx context.Context, fullName string) (map[string]string, error) {
	out, err := g.run(ctx, g.dir(fullName), "for-each-ref", "--format=%(objectname) %(refname)")
	if err != nil {
		return nil, err
	}
	refs := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if sha, ref, ok := strings.Cut(line, " "); ok {
			refs[ref] = sha
		}
	}
	return refs, nil
}

// refChange is one ref a push moved: Old is "" for a new ref, New is "" for a deleted one.
type refChange struct{ Ref, Old, New string }

// diffRefs lists the refs that differ between two snapshots, by name.
func diffRefs(before, after map[string]string) []refChange {
	var out []refChange
	for ref, old := range before {
		if now := after[ref]; now != old {
			out = append(out, refChange{Ref: ref, Old: old, New: now})
		}
	}
	for ref, now := range after {
		if _, had := before[ref]; !had {
			out = append(out, refChange{Ref: ref, New: now})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref < out[j].Ref })
	return out
}

// headState is what the hub reads from the head of main: the README's card, the files, and the
// commit time.
type headState struct {
	card     cardData
	files    []string
	modified time.Time
}

// readHead reads the head commit sha of main. With no main, everything is empty.
func (g *gitRepos) readHead(ctx context.Context, fullName, sha string) (headState, error) {
	st := headState{card: cardData{}, files: []string{}}
	if sha == "" {
		return st, nil
	}
	dir := g.dir(fullName)
	out, err := g.run(ctx, dir, "show", "--no-patch", "--format=%ct", sha)
	if err != nil {
		return st, err
	}
	secs, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return st, fmt.Errorf("the commit time of %s: %q", sha, out)
	}
	st.modified = time.Unix(secs, 0).UTC()
	out, err = g.run(ctx, dir, "ls-tree", "-r", "-z", "--name-only", sha)
	if err != nil {
		return st, err
	}
	hasReadme := false
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			st.files = append(st.files, f)
			hasReadme = hasReadme || f == "README.md"
		}
	}
	if !hasReadme {
		return st, nil
	}
	cmd := exec.CommandContext(ctx, g.git, "cat-file", "blob", sha+":README.md")
	cmd.Dir, cmd.Env = dir, g.env()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return st, err
	}
	if err := cmd.Start(); err != nil {
		return st, err
	}
	readme, readErr := io.ReadAll(io.LimitReader(stdout, maxReadmeBytes))
	_, _ = io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		return st, fmt.Errorf("git cat-file %s:README.md: %w", sha, err)
	}
	if readErr != nil {
		return st, readErr
	}
	st.card = parseFrontMatter(readme)
	return st, nil
}
