package python

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/robothub/robothub/core/apps"
)

// Source says where a venv's packages come from. Online (the default), from the index of pip's
// own configuration (PIP_INDEX_URL, pip.conf) unless IndexURL or ExtraIndexURLs are set. Offline,
// every command runs with --no-index, finds packages only in WheelDirs, and reaches no network.
type Source struct {
	Offline        bool
	IndexURL       string   // pip --index-url; "" keeps pip's configuration
	ExtraIndexURLs []string // pip --extra-index-url
	WheelDirs      []string // pip --find-links, online too: local wheels are candidates beside the index
	// UV is the uv executable that installs the checked wheel files (`uv pip install --python
	// <venv>`), as the anchor daemon uses uv when it is on PATH; "" installs with pip. Resolving
	// and downloading is pip's either way: only pip reports what it would install before it does.
	UV string
}

// Describe says where packages come from, for logs: credentials in index URLs are redacted.
func (s Source) Describe() string {
	switch {
	case s.Offline:
		return "wheels in " + strings.Join(s.WheelDirs, ", ") + " only (offline)"
	case s.IndexURL != "":
		return "the index " + apps.RedactURL(s.IndexURL)
	}
	return "the package index of pip's configuration"
}

func (s Source) findLinks() []string {
	var args []string
	for _, d := range s.WheelDirs {
		if d != "" {
			args = append(args, "--find-links", d)
		}
	}
	return args
}

// indexArgs are pip's arguments that say where packages come from.
func (s Source) indexArgs() []string {
	var args []string
	switch {
	case s.Offline:
		args = append(args, "--no-index")
	case s.IndexURL != "":
		args = append(args, "--index-url", s.IndexURL)
	}
	if !s.Offline {
		for _, e := range s.ExtraIndexURLs {
			args = append(args, "--extra-index-url", e)
		}
	}
	return append(args, s.findLinks()...)
}

// installCommand returns the command that installs targets, and only them: no index, no
// dependencies, replacing what is installed even at the same version (new code of the same
// version is new code).
func (v *Venv) installCommand(noBuildIsolation bool, targets ...string) (string, []string) {
	name, args := v.Python(), v.pip("install", "--no-index", "--no-deps", "--force-reinstall")
	if v.Source.UV != "" {
		name, args = v.Source.UV, []string{"pip", "install", "--python", v.Python(), "--no-index", "--no-deps", "--reinstall"}
	}
	if noBuildIsolation {
		args = append(args, "--no-build-isolation")
	}
	if v.NoCompile && v.Source.UV == "" {
		args = append(args, "--no-compile")
	}
	return name, append(args, targets...)
}

// Install installs wheel files, and only them: with the pip Prestart started, if it waits.
func (v *Venv) Install(ctx context.Context, log io.Writer, wheels ...string) error {
	name, args := v.installCommand(false, wheels...)
	prefix := v.pip("")[:3] // -I -m pip
	if p := v.warmPip.take(); p != nil {
		if name != v.Python() || !slices.Equal(args[:len(prefix)], prefix) {
			p.end()
		} else {
			fmt.Fprintf(log, "Running %s %s (started ahead)\n", filepath.Base(name), apps.RedactText(strings.Join(args, " ")))
			tail := &lineTail{max: 40}
			err := p.run(ctx, io.MultiWriter(log, tail), args[len(prefix):])
			if !errors.Is(err, errNotTaken) {
				return installerError(ctx, err, tail)
			}
		}
	}
	return v.runInstaller(ctx, log, nil, name, args...)
}

// Uninstall removes distributions from the venv.
func (v *Venv) Uninstall(ctx context.Context, log io.Writer, dists ...string) error {
	return v.runInstaller(ctx, log, nil, v.Python(), v.pip("uninstall", append([]string{"--yes"}, dists...)...)...)
}

// installerMessage picks pip's "ERROR:" lines, else uv's report (from "×" on), else the last lines.
func installerMessage(lines []string) string {
	var picked []string
	for _, l := range lines {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "ERROR:") {
			picked = append(picked, t)
		}
	}
	if len(picked) == 0 {
		from := slices.IndexFunc(lines, func(l string) bool {
			t := strings.TrimSpace(l)
			return strings.HasPrefix(t, "×") || strings.HasPrefix(t, "error:")
		})
		if from < 0 {
			from = max(0, len(lines)-3)
		}
		for _, l := range lines[from:] {
			if l = strings.TrimSpace(l); l != "" {
				picked = append(picked, l)
			}
		}
	}
	return apps.RedactText(strings.Join(picked[max(0, len(picked)-8):], "; "))
}

// lineTail keeps the last lines written to it.
type lineTail struct {
	mu      sync.Mutex
	max     int
	partial string
	lines   []string
}

func (t *lineTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(t.partial+string(p), "\n")
	t.partial = lines[len(lines)-1]
	for _, l := range lines[:len(lines)-1] {
		t.lines = append(t.lines, strings.TrimRight(l, "\r"))
	}
	if len(t.lines) > t.max {
		t.lines = append(t.lines[:0], t.lines[len(t.lines)-t.max:]...)
	}
	return len(p), nil
}

func (t *lineTail) last() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := slices.Clone(t.lines)
	if t.partial != "" {
		out = append(out, t.partial)
	}
	return out
}

// wheelName is the distribution and version of a wheel file's name: pip-23.0.1-py3-none-any.whl
// gives pip and 23.0.1 ("" when the name is not a wheel's).
func wheelName(path string) (dist, version string) {
	parts := strings.Split(strings.TrimSuffix(filepath.Base(path), ".whl"), "-")
	if len(parts) < 5 || !strings.HasSuffix(path, ".whl") {
		return "", ""
	}
	return parts[0], parts[1]
}

func runtimeDist(name string) bool {
	switch Normalize(name) {
	case "pip", "setuptools", "wheel", apps.SDKDistribution:
		return true
	}
	return false
}

// errorf wraps a failed step's error for a job's log and answer.
func errorf(step string, err error) error { return fmt.Errorf("%s: %w", step, err) }
