package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/robothub/robothub/core/procgroup"
)

// How publish runs git. The app folder, its .git/config and its .gitattributes may come from
// anyone; none of it may run a program, point git at files outside the folder, or let anything git
// runs see the token:
//   - before any git command, the folder's repository is checked (gitDirOf): its .git must be its
//     own (a directory, or a gitdir file naming one inside the folder), and its configuration must
//     name no work tree (core.worktree) and no include (include.path, includeIf.*.path), which
//     would have git add, or read, files elsewhere (~/.cache/huggingface/token);
//   - every git command names its repository and work tree (--git-dir, --work-tree): nothing of
//     the folder chooses them;
//   - every git command gets packageEnv (no credentials, a throw-away HOME), GIT_CONFIG_NOSYSTEM=1
//     and GIT_CONFIG_GLOBAL=/dev/null: only the folder's own configuration is read, and
//   - gitSafety overrides, with -c (which wins over every file), each key of it that runs a
//     program: hooks, core.fsmonitor, the pager, the editor, credential helpers, signing, and the
//     filter, diff and merge drivers the folder's configuration names (neutralizeDrivers);
//   - the push, the one command with the token, runs in a throw-away bare repository of ours that
//     borrows the folder's objects (objects/info/alternates): the folder's configuration
//     (url.*.insteadOf, http.proxy, remote.*.receivepack...) is never read by it.
// The user's identity (user.name, user.email) is read from their own configuration first.

var gitSafety = []string{
	"-c", "core.hooksPath=" + os.DevNull, "-c", "core.fsmonitor=false", "-c", "core.pager=cat",
	"-c", "core.editor=true", "-c", "sequence.editor=true", "-c", "core.askPass=", "-c", "credential.helper=",
	"-c", "commit.gpgSign=false", "-c", "tag.gpgSign=false", "-c", "diff.external=", "-c", "core.sshCommand=ssh",
	"-c", "protocol.ext.allow=never",
}

// driverKey matches a configuration key that names a program of a filter, diff or merge driver.
var driverKey = regexp.MustCompile(`^(filter\.[^\n]+\.(clean|smudge|process|required)|diff\.[^\n]+\.(textconv|command)|merge\.[^\n]+\.driver)$`)

// gitAuthEnv passes the token to git as an HTTP header for the hub's URLs only, through
// GIT_CONFIG_* variables of the push alone: it is not on a command line (ps shows that) nor in a file.
func gitAuthEnv(endpoint, user, token string) []string {
	basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + token))
	return []string{
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=http." + endpoint + "/.extraHeader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic " + basic,
	}
}

// gitRunner runs git in the app's folder.
type gitRunner struct {
	e       *env
	dir     string
	gitDir  string // the folder's repository (gitDirOf); "" until commitAll makes one
	token   string
	authEnv []string
	drivers []string // -c overrides of the folder's driver programs
}

// gitDirOf returns the git directory of the app folder dir ("" when it is no repository yet), or
// refuses it, naming what it found: a .git that is not the folder's own directory (a gitdir file,
// a link to a directory outside the folder, a commondir elsewhere), or a configuration that names
// a work tree or an include. Reading the configuration with --file follows no include and runs
// nothing.
func gitDirOf(ctx context.Context, e *env, dir string) (string, error) {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	inside := func(p string) bool {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			return false
		}
		rel, err := filepath.Rel(root, r)
		return err == nil && filepath.IsLocal(rel)
	}
	dotGit := filepath.Join(dir, ".git")
	fi, err := os.Lstat(dotGit)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", nil
	case err != nil:
		return "", err
	}
	gitDir := dotGit
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		// Outside the folder it is another repository; inside, git would commit its target.
		target, _ := os.Readlink(dotGit)
		return "", fmt.Errorf("%s is a link to %s: publish pushes the folder's own repository only; make .git a directory of the folder (git init)", dotGit, target)
	case fi.Mode().IsRegular():
		data, err := os.ReadFile(dotGit)
		if err != nil {
			return "", err
		}
		target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
		target = strings.TrimSpace(target)
		if !ok || target == "" {
			return "", fmt.Errorf("%s is a file but not a gitdir file (gitdir: <path>)", dotGit)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		if !inside(target) {
			return "", fmt.Errorf("%s is a gitdir file naming %s, outside the app folder: publish pushes the folder's own repository only; make .git a directory of the folder (git init)", dotGit, target)
		}
		// Inside the folder but not at .git, the repository is part of the work tree: git would
		// commit it (its configuration and objects) as files of the app.
		return "", fmt.Errorf("%s is a gitdir file naming %s, inside the app folder: git would publish that repository as files of the app; make .git a directory of the folder", dotGit, target)
	case !fi.IsDir():
		return "", fmt.Errorf("%s is neither a directory nor a gitdir file", dotGit)
	}
	if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common := strings.TrimSpace(string(data))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		if !inside(common) {
			return "", fmt.Errorf("%s names the repository %s (commondir), outside the app folder: publish pushes the folder's own repository only", gitDir, common)
		}
	}
	env := append(e.packageEnv(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "LC_ALL=C")
	for _, name := range []string{"config", "config.worktree"} {
		file := filepath.Join(gitDir, name)
		if !isFile(file) {
			continue
		}
		cmd := exec.CommandContext(ctx, "git", "config", "--file", file, "--name-only", "--list")
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("reading %s: %v", file, err)
		}
		for _, key := range strings.Split(string(out), "\n") {
			k := strings.ToLower(strings.TrimSpace(key))
			switch {
			case k == "core.worktree":
				return "", fmt.Errorf("%s names core.worktree: git would commit another directory than the app folder; remove it (git config --unset core.worktree)", file)
			case k == "include.path" || (strings.HasPrefix(k, "includeif.") && strings.HasSuffix(k, ".path")):
				return "", fmt.Errorf("%s names %s: git would read configuration from outside the app folder; remove it (git config --unset-all %s)", file, strings.TrimSpace(key), strings.TrimSpace(key))
			}
		}
	}
	return gitDir, nil
}

// gitEnv is git's environment: no credentials, no system or user configuration, no prompt.
func (g *gitRunner) gitEnv() []string {
	return append(g.e.packageEnv(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=", "LC_ALL=C")
}

// runIn runs git with args in dir; its output has the token removed. Its arguments name the
// repository (--git-dir) and, for the folder's, the work tree.
func (g *gitRunner) runIn(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	start := time.Now()
	full := append(append(append([]string(nil), gitSafety...), g.drivers...), args...)
	cmd := exec.Command("git", full...)
	cmd.Dir = dir
	cmd.Env = append(g.gitEnv(), env...)
	var out bytes.Buffer
	err := procgroup.Run(ctx, cmd, &out)
	text := out.String()
	if g.token != "" {
		text = strings.ReplaceAll(text, g.token, "<token>")
	}
	g.e.log.Debug("run", "cmd", "git "+strings.Join(args, " "), "elapsed", time.Since(start).Round(time.Millisecond), "err", err)
	if err != nil {
		if strings.Contains(err.Error(), "not found") {
			return text, errors.New("git not found: publishing pushes with git; install it")
		}
		return text, fmt.Errorf("git %s: %v\n%s", gitCommand(args), err, tail(text, 10))
	}
	return text, nil
}

// gitCommand is the git command args run (push, add), past the options that name the repository.
func gitCommand(args []string) string {
	for i, a := range args {
		if a == "-c" {
			continue
		}
		if i > 0 && args[i-1] == "-c" || strings.HasPrefix(a, "-") {
			continue
		}
		return a
	}
	return strings.Join(args, " ")
}

// run runs git with args on the folder's repository and work tree.
func (g *gitRunner) run(ctx context.Context, env []string, args ...string) (string, error) {
	return g.runIn(ctx, g.dir, env, append([]string{"--git-dir=" + g.gitDir, "--work-tree=" + g.dir}, args...)...)
}

// neutralizeDrivers reads the folder's configuration (reading runs nothing) and overrides every
// driver program it names.
func (g *gitRunner) neutralizeDrivers(ctx context.Context) error {
	if g.gitDir == "" {
		return nil
	}
	out, err := g.run(ctx, nil, "config", "--name-only", "--list", "--includes")
	if err != nil {
		return err
	}
	for _, key := range strings.Split(out, "\n") {
		switch key = strings.TrimSpace(key); {
		case strings.HasSuffix(strings.ToLower(key), ".required") && driverKey.MatchString(strings.ToLower(key)):
			g.drivers = append(g.drivers, "-c", key+"=false") // a required filter with no program fails
		case driverKey.MatchString(strings.ToLower(key)):
			g.drivers = append(g.drivers, "-c", key+"=")
		}
	}
	return nil
}

// identity is the user's user.name and user.email as their own git configuration gives them
// (system, user and the folder's), "" for those unset.
func (g *gitRunner) identity(ctx context.Context, key string) string {
	args := []string{"-c", "core.fsmonitor=false", "config", "--get", key}
	if g.gitDir != "" {
		args = append([]string{"--git-dir=" + g.gitDir}, args...)
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = g.dir
	cmd.Env = append(g.e.packageEnv(), "HOME="+g.e.getenv("HOME"), "LC_ALL=C")
	if xdg := g.e.getenv("XDG_CONFIG_HOME"); xdg != "" {
		cmd.Env = append(cmd.Env, "XDG_CONFIG_HOME="+xdg)
	}
	out, _ := cmd.Output()
	return strings.TrimSpace(string(out))
}

// commitAll makes the folder a git repository if it is not one, and commits everything in it.
func (g *gitRunner) commitAll(ctx context.Context, message, user, endpoint string) error {
	if g.gitDir == "" {
		// The folder has no .git: a repository of its own, made where git init makes it.
		if _, err := g.runIn(ctx, g.dir, nil, "init", "--quiet", "--initial-branch=main", g.dir); err != nil {
			return err
		}
		g.gitDir = filepath.Join(g.dir, ".git")
		fmt.Fprintf(g.e.stdout, "Made %s a git repository\n", g.dir)
	}
	if err := ensureGitignore(g.e, g.dir); err != nil {
		return err
	}
	if _, err := g.run(ctx, nil, "add", "--all"); err != nil {
		return err
	}
	status, err := g.run(ctx, nil, "status", "--porcelain")
	if err != nil {
		return err
	}
	_, headErr := g.run(ctx, nil, "rev-parse", "--verify", "--quiet", "HEAD")
	if strings.TrimSpace(status) == "" && headErr == nil {
		fmt.Fprintln(g.e.stdout, "Nothing new to commit: pushing the current commit")
		return nil
	}
	// A commit needs an author: the user's, else the hub user.
	name, email := g.identity(ctx, "user.name"), g.identity(ctx, "user.email")
	if name == "" {
		name = user
	}
	if email == "" {
		host := strings.TrimPrefix(strings.TrimPrefix(endpoint, "https://"), "http://")
		host, _, _ = strings.Cut(host, "/")
		host, _, _ = strings.Cut(host, ":")
		email = user + "@users.noreply." + host
	}
	if _, err := g.run(ctx, nil, "-c", "user.name="+name, "-c", "user.email="+email, "commit", "--quiet", "--no-verify", "-m", message); err != nil {
		return err
	}
	n := len(strings.Split(strings.TrimSpace(status), "\n"))
	fmt.Fprintf(g.e.stdout, "Committed %d changed file(s): %s\n", n, strconv.Quote(message))
	return nil
}

// pushTo points the "space" remote at the space and pushes HEAD to its main branch, out of a
// throw-away repository that borrows the folder's objects. A space that was just created holds
// only the hub's generated files: the push replaces them.
func (g *gitRunner) pushTo(ctx context.Context, spaceURL string, created bool) error {
	current, err := g.run(ctx, nil, "remote", "get-url", spaceRemote)
	switch {
	case err != nil:
		if _, err := g.run(ctx, nil, "remote", "add", spaceRemote, spaceURL); err != nil {
			return err
		}
	case strings.TrimSpace(current) != spaceURL:
		if _, err := g.run(ctx, nil, "remote", "set-url", spaceRemote, spaceURL); err != nil {
			return err
		}
	}
	head, err := g.run(ctx, nil, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return err
	}
	objects, err := g.run(ctx, nil, "rev-parse", "--path-format=absolute", "--git-path", "objects")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "robot-app-push-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if _, err := g.runIn(ctx, tmp, nil, "init", "--quiet", "--bare", tmp); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "objects", "info", "alternates"), []byte(strings.TrimSpace(objects)+"\n"), 0o644); err != nil {
		return err
	}
	args := []string{"push", "--quiet", "--no-verify", spaceURL, strings.TrimSpace(head) + ":refs/heads/main"}
	if created {
		args = []string{"push", "--quiet", "--no-verify", "--force", spaceURL, strings.TrimSpace(head) + ":refs/heads/main"}
	}
	out, err := g.runIn(ctx, tmp, g.authEnv, append([]string{"--git-dir=" + tmp}, args...)...)
	if err != nil {
		if strings.Contains(out, "non-fast-forward") || strings.Contains(out, "fetch first") || strings.Contains(out, "rejected") {
			return fmt.Errorf("the space has commits that this folder does not have, so the push was refused: run git pull --rebase %s main in %s (your changes on top of the space's), then publish again", spaceRemote, g.dir)
		}
		return fmt.Errorf("pushing to %s: %w", spaceURL, err)
	}
	fmt.Fprintf(g.e.stdout, "Pushed to %s (branch main)\n", spaceURL)
	return nil
}
