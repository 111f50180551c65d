package apps

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/robothub/robothub/core/hub"
)

// PackageSource says where the apps venv's packages come from. Online (the default), from the
// index of pip's own configuration (PIP_INDEX_URL, pip.conf) unless IndexURL or ExtraIndexURLs
// are set. Offline, every install runs with --no-index and finds packages only in WheelDirs.
type PackageSource struct {
	Offline        bool
	IndexURL       string   // pip --index-url; "" keeps pip's configuration
	ExtraIndexURLs []string // pip --extra-index-url
	WheelDirs      []string // pip --find-links, online too: local wheels are candidates beside the index
	// UV is the uv executable to install with instead of pip (`uv pip install --python <venv>`), as
	// the anchor daemon does when uv is on PATH; "" installs with pip.
	UV string
}

// Describe says where packages come from, for logs: credentials in index URLs are redacted.
func (s PackageSource) Describe() string {
	tool := "pip"
	if s.UV != "" {
		tool = "uv"
	}
	switch {
	case s.Offline:
		return fmt.Sprintf("%s, offline: wheels in %s", tool, strings.Join(s.WheelDirs, ", "))
	case s.IndexURL != "":
		return fmt.Sprintf("%s, index %s", tool, RedactURL(s.IndexURL))
	}
	return tool + ", the package index of pip's configuration"
}

// RedactURL hides the credentials of a URL by the rule of hub.RedactUserinfo (the whole user
// information becomes "xxxxx"), for logs, API answers and errors. An scp-style git address
// (git@host:path) keeps its user: an SSH login name, not a credential.
func RedactURL(raw string) string {
	if u, err := url.Parse(raw); err != nil {
		return RedactText(raw)
	} else if u.User != nil {
		return hub.RedactUserinfo(u)
	}
	return raw
}

type installOptions struct {
	noDeps           bool
	reinstall        bool     // replace what is installed even at the same version
	upgradePackages  []string // distributions to take at their newest versions (requirements named in targets)
	noBuildIsolation bool     // build with the venv's setuptools and wheel
	noIndex          bool     // this command needs no index whatever the mode (a local wheel without its dependencies)
}

var pipArgs = []string{"-m", "pip", "--disable-pip-version-check", "--no-input"}

// installCommand returns `<venv python> -m pip install ...` or `uv pip install --python ...`.
func (v *Venv) installCommand(ctx context.Context, opts installOptions, targets ...string) (string, []string) {
	src, uv := v.Source, v.Source.UV != ""
	name, args := v.Python(), append(slices.Clone(pipArgs), "install")
	if uv {
		name, args = src.UV, []string{"pip", "install", "--python", v.Python()}
	}
	switch {
	case src.Offline || opts.noIndex:
		args = append(args, "--no-index")
	case src.IndexURL != "":
		args = append(args, "--index-url", src.IndexURL)
	case uv && os.Getenv("UV_INDEX_URL") == "" && os.Getenv("UV_DEFAULT_INDEX") == "":
		// uv reads neither pip.conf nor PIP_INDEX_URL: hand it pip's configuration, unless uv has
		// one of its own.
		if idx := v.pipConfig(ctx, "index-url"); idx != "" {
			args = append(args, "--index-url", idx)
		}
	}
	if !src.Offline && !opts.noIndex {
		extra := src.ExtraIndexURLs
		if uv && len(extra) == 0 && os.Getenv("UV_EXTRA_INDEX_URL") == "" && os.Getenv("UV_INDEX") == "" {
			extra = strings.Fields(v.pipConfig(ctx, "extra-index-url"))
		}
		for _, e := range extra {
			args = append(args, "--extra-index-url", e)
		}
	}
	args = append(args, v.findLinks()...)
	if opts.noDeps {
		args = append(args, "--no-deps")
	}
	switch {
	case opts.reinstall && uv:
		args = append(args, "--reinstall")
	case opts.reinstall:
		args = append(args, "--force-reinstall")
	}
	switch {
	case len(opts.upgradePackages) == 0:
	case uv: // uv's --upgrade would upgrade every package of the venv: name them.
		for _, p := range opts.upgradePackages {
			args = append(args, "--upgrade-package", p)
		}
	default:
		// pip's --upgrade, with its default only-if-needed strategy, upgrades the requirements
		// named on the command line and their dependencies only where they must.
		args = append(args, "--upgrade")
	}
	if opts.noBuildIsolation {
		args = append(args, "--no-build-isolation")
	}
	return name, append(args, targets...)
}

// pipConfigLine matches `pip config list`: global.index-url='...', or :env:.index-url='...'.
var pipConfigLine = regexp.MustCompile(`^([^=]*)\.([a-z-]+)='(.*)'$`)

// pipConfig returns the value pip's configuration gives key ("" if none), for uv: the environment
// wins, then the most specific file, as in pip itself.
func (v *Venv) pipConfig(ctx context.Context, key string) string {
	out, err := exec.CommandContext(ctx, v.Python(), "-m", "pip", "--disable-pip-version-check", "config", "list").Output()
	if err != nil {
		return ""
	}
	rank := map[string]int{":env:": 4, "install": 3, "global": 2}
	best, bestRank := "", 0
	for _, line := range strings.Split(string(out), "\n") {
		m := pipConfigLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil || m[2] != key {
			continue
		}
		if r := rank[m[1]] + 1; r > bestRank {
			best, bestRank = m[3], r
		}
	}
	return best
}

// install runs one install command; a failure's error carries the installer's explanation.
func (v *Venv) install(ctx context.Context, log io.Writer, opts installOptions, targets ...string) error {
	name, args := v.installCommand(ctx, opts, targets...)
	fmt.Fprintf(log, "Running %s %s\n", filepath.Base(name), RedactText(strings.Join(args, " ")))
	tail := &lineTail{max: 40}
	err := runLoggedEnv(ctx, io.MultiWriter(log, tail), nil, name, args...)
	if err == nil {
		return nil
	}
	if why := installerMessage(tail.last(40)); why != "" {
		return fmt.Errorf("%w: %s", err, why)
	}
	return err
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
	return RedactText(strings.Join(picked[max(0, len(picked)-8):], "; "))
}

// urlWithUserinfo finds URLs with credentials in text, to the authority's last @ (passwords hold @).
var urlWithUserinfo = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s?#'"]*@`)

// RedactText hides the credentials of every URL in s, whole, as RedactURL does.
func RedactText(s string) string {
	return urlWithUserinfo.ReplaceAllString(s, "${1}xxxxx@")
}

// Write makes a lineTail an io.Writer of whole lines.
func (t *lineTail) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		t.add(l)
	}
	return len(p), nil
}

// requirementNamePattern is the distribution name at the start of a PEP 508 requirement.
var requirementNamePattern = regexp.MustCompile(`^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)`)

func requirementName(req string) string {
	m := requirementNamePattern.FindStringSubmatch(req)
	if m == nil {
		return ""
	}
	return m[1]
}

// installDependencies installs the package's requirements before the app, in one resolver run: one
// that cannot be resolved changes nothing, so the installed version keeps working. An upgrade then
// takes the newest versions of those in the venv itself; the system's (numpy from apt) stay.
func (m *Manager) installDependencies(ctx context.Context, job *Job, meta wheelMeta, upgrade bool) error {
	var reqs []string
	for _, r := range meta.requires {
		if normalizeDist(requirementName(r)) == normalizeDist(SDKDistribution) {
			job.Logf("Requirement %s: the daemon provides robot_sdk %s", r, m.SDKVersion())
			continue
		}
		reqs = append(reqs, r)
	}
	if len(reqs) == 0 {
		return nil
	}
	job.Logf("Installing dependencies: %s", strings.Join(reqs, ", "))
	if err := m.venv.install(ctx, job, installOptions{}, reqs...); err != nil {
		return err
	}
	if !upgrade {
		return nil
	}
	var targets, names []string
	for _, r := range reqs {
		if name := requirementName(r); name != "" && m.venv.installedVersion(name) != "" {
			targets, names = append(targets, r), append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	job.Logf("Updating %s to the newest versions allowed", strings.Join(names, ", "))
	return m.venv.install(ctx, job, installOptions{upgradePackages: names}, targets...)
}
