package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/robothub/robothub/core/hub"
)

// Publishing without git: the anchor's assistant falls back to the Python client's upload_folder
// (with delete_patterns=["*"]) when git cannot push; here, when git is not installed, one commit
// through the hub's commit API makes the space's main hold exactly what a push would have.

// defaultGitignore keeps caches, build output and venvs out of the space.
const defaultGitignore = "__pycache__/\n*.py[cod]\n*.egg-info/\nbuild/\ndist/\n.venv/\nvenv/\n"

// ensureGitignore writes the default .gitignore into an app folder that has none.
func ensureGitignore(e *env, dir string) error {
	if isFile(filepath.Join(dir, ".gitignore")) {
		return nil
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(defaultGitignore), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "Wrote .gitignore (caches, build output and venvs stay out of the space)")
	return nil
}

// gitAvailable reports whether git is on the PATH of the command's environment (the process's
// when that names none), and the name looked for.
func gitAvailable(getenv func(string) string) (string, bool) {
	path := getenv("PATH")
	if path == "" {
		_, err := exec.LookPath("git")
		return "git", err == nil
	}
	for _, dir := range filepath.SplitList(path) {
		for _, name := range []string{"git", "git.exe"} {
			if info, err := os.Stat(filepath.Join(dir, name)); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
				return "git", true
			}
		}
	}
	return "git", false
}

// appFiles lists the files of the app folder that git would commit: everything but .git and what
// the folder's .gitignore files name (each for its own folder and below), as slash paths, sorted.
func appFiles(dir string) ([]string, error) {
	var patterns []gitignore.Pattern
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		var parts []string
		if rel != "." {
			parts = strings.Split(filepath.ToSlash(rel), "/")
		}
		ignored := gitignore.NewMatcher(patterns)
		if d.IsDir() {
			if d.Name() == ".git" || (rel != "." && ignored.Match(parts, true)) {
				return filepath.SkipDir
			}
			// WalkDir enters a folder before its contents: its patterns apply to what follows.
			data, err := os.ReadFile(filepath.Join(p, ".gitignore"))
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			for _, line := range strings.Split(string(data), "\n") {
				line = strings.TrimRight(line, "\r")
				if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "#") {
					patterns = append(patterns, gitignore.ParsePattern(line, parts))
				}
			}
			return nil
		}
		if !d.Type().IsRegular() || ignored.Match(parts, false) {
			return nil
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	slices.Sort(files)
	return files, err
}

// commitByAPI commits the app folder to the space's main through the commit API: its files are
// added or replaced and the space's other files deleted.
func commitByAPI(ctx context.Context, e *env, client *hub.Client, spaceID, dir, message string) error {
	if err := ensureGitignore(e, dir); err != nil {
		return err
	}
	files, err := appFiles(dir)
	if err != nil {
		return err
	}
	req := hub.CommitRequest{RepoType: "space", RepoID: spaceID, Summary: message}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return err
		}
		req.Files = append(req.Files, hub.CommitFile{Path: f, Content: data})
	}
	sp, err := client.SpaceInfo(ctx, spaceID)
	if err != nil {
		return fmt.Errorf("reading the files of the space %s: %w", spaceID, err)
	}
	for _, s := range sp.Siblings {
		if _, found := slices.BinarySearch(files, s.RFilename); !found {
			req.DeletedFiles = append(req.DeletedFiles, s.RFilename)
		}
	}
	info, err := client.Commit(ctx, req)
	var he *hub.Error
	if errors.As(err, &he) && he.Status == 400 {
		return fmt.Errorf("the hub refused the commit to %s: %s", spaceID, he.Message)
	}
	if err != nil {
		return fmt.Errorf("committing to the space %s: %w", spaceID, err)
	}
	fmt.Fprintf(e.stdout, "Committed %d file(s), deleted %d, through the commit API: %s (%s)\n", len(req.Files), len(req.DeletedFiles), info.OID, message)
	return nil
}
