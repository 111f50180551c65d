package python

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/robothub/robothub/core/apps"
)

// netTimeout is pip's socket timeout in seconds: a server that stops answering fails the step in
// this time (per attempt) rather than hang it until the step's deadline.
const netTimeout = "30"

// offlineEnv keeps pip, and the git it may run for a requirement on a VCS URL, off the network:
// every proxy is a closed port on loopback. --no-index alone does not: pip still downloads a
// requirement that names a URL (pkg @ https://...).
var offlineEnv = []string{
	"http_proxy=http://127.0.0.1:9", "https_proxy=http://127.0.0.1:9", "all_proxy=http://127.0.0.1:9",
	"HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "ALL_PROXY=http://127.0.0.1:9",
	"no_proxy=", "NO_PROXY=", "GIT_ALLOW_PROTOCOL=file",
}

// report is the part of pip's installation report (pip install --dry-run --report) read here.
type report struct {
	Install []struct {
		DownloadInfo struct {
			URL         string `json:"url"`
			ArchiveInfo *struct {
				Hashes map[string]string `json:"hashes"`
			} `json:"archive_info"`
			VCSInfo *struct {
				VCS      string `json:"vcs"`
				CommitID string `json:"commit_id"`
			} `json:"vcs_info"`
		} `json:"download_info"`
		IsDirect bool `json:"is_direct"`
		Metadata struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"metadata"`
	} `json:"install"`
}

// pin is one distribution a resolution says to install.
type pin struct {
	name, version, target, url, sha256 string
	direct                             bool
}

// Resolve resolves req's requirements against the venv (what it has stays unless an upgrade or a
// requirement needs otherwise), then downloads every distribution to install, building those that
// come as source into wheels, into req.Dir, and reads them. Nothing is installed. The runtime's
// distributions (pip, setuptools, wheel, the SDK) are held at their installed versions. Offline,
// a requirement that names a URL is refused before pip runs, and pip reaches no network.
func (v *Venv) Resolve(ctx context.Context, log io.Writer, req apps.Resolution) ([]apps.Wheel, error) {
	if len(req.Requirements) == 0 {
		return nil, nil
	}
	if v.Source.Offline {
		var direct []string
		for _, r := range req.Requirements {
			if isDirectReference(r) {
				direct = append(direct, apps.RedactText(r))
			}
		}
		if len(direct) > 0 {
			return nil, fmt.Errorf("refused: %s names a URL, and an offline install takes packages from %s only, never from a URL; vendor the wheel into a wheel directory and require it by name",
				strings.Join(direct, ", "), strings.Join(v.Source.WheelDirs, ", "))
		}
	}
	if err := os.MkdirAll(req.Dir, 0o755); err != nil {
		return nil, err
	}
	constraints := map[string]string{}
	for _, d := range []string{"pip", "setuptools", "wheel", apps.SDKDistribution} {
		if version := v.InstalledVersion(d); version != "" {
			constraints[d] = version
		}
	}
	fmt.Fprintf(log, "Resolving %s from %s\n", apps.RedactText(strings.Join(req.Requirements, ", ")), v.Source.Describe())
	pins, err := v.dryRun(ctx, log, req.Dir, "resolution", req.Requirements, constraints, false)
	if err != nil {
		return nil, err
	}
	if req.Upgrade {
		// pip upgrades every requirement named with --upgrade: name only those of the venv itself,
		// so that what the system provides stays the system's; hold the rest where the first run put it.
		var upgrade []string
		for _, r := range req.Requirements {
			if slices.Contains(req.Held, r) {
				continue
			}
			if name := RequirementName(r); name != "" && v.InstalledVersion(name) != "" {
				upgrade = append(upgrade, r)
			}
		}
		if len(upgrade) > 0 {
			held := maps.Clone(constraints)
			for name, p := range pins {
				held[name] = p.version
			}
			for _, r := range upgrade {
				delete(held, RequirementName(r))
			}
			newer, err := v.dryRun(ctx, log, req.Dir, "upgrade", upgrade, held, true)
			if err != nil {
				return nil, err
			}
			maps.Copy(pins, newer)
		}
	}
	if len(pins) == 0 {
		fmt.Fprintln(log, "Every requirement is already installed")
		return nil, nil
	}
	var targets, shown []string
	for _, name := range slices.Sorted(maps.Keys(pins)) {
		p := pins[name]
		if v.Source.Offline && p.direct && !strings.HasPrefix(p.url, "file:") {
			return nil, fmt.Errorf("refused: dependency %s names the URL %s, and an offline install never downloads", p.name, apps.RedactURL(p.url))
		}
		targets, shown = append(targets, p.target), append(shown, p.name+" "+p.version)
	}
	fmt.Fprintf(log, "Downloading %s to check before installing\n", strings.Join(shown, ", "))
	wheelDir := filepath.Join(req.Dir, "wheels")
	args := append(v.pip("wheel", "--no-deps", "--timeout", netTimeout, "--wheel-dir", wheelDir), v.Source.indexArgs()...)
	probeArgs, unreachable := v.indexArgsFor(ctx, log, v.environ(v.resolveEnv()))
	if err := v.runInstaller(ctx, log, v.resolveEnv(), v.Python(), append(append(args, probeArgs...), targets...)...); err != nil {
		if unreachable != nil {
			err = fmt.Errorf("%w (%v)", err, unreachable)
		}
		return nil, errorf("downloading the dependencies", err)
	}
	return readPinned(wheelDir, pins)
}

// dryRun asks pip what installing requirements would install (with --upgrade when upgrade),
// under constraints (name -> version), and returns it by normalized name.
func (v *Venv) dryRun(ctx context.Context, log io.Writer, dir, what string, requirements []string, constraints map[string]string, upgrade bool) (map[string]pin, error) {
	reportPath := filepath.Join(dir, what+"-report.json")
	constraintsPath := filepath.Join(dir, what+"-constraints.txt")
	var lines strings.Builder
	for _, name := range slices.Sorted(maps.Keys(constraints)) {
		fmt.Fprintf(&lines, "%s==%s\n", name, constraints[name])
	}
	if err := os.WriteFile(constraintsPath, []byte(lines.String()), 0o644); err != nil {
		return nil, err
	}
	args := v.pip("install", "--dry-run", "--quiet", "--report", reportPath, "--constraint", constraintsPath, "--timeout", netTimeout)
	if upgrade {
		args = append(args, "--upgrade", "--upgrade-strategy", "only-if-needed")
	}
	probeArgs, unreachable := v.indexArgsFor(ctx, log, v.environ(v.resolveEnv()))
	args = append(append(append(args, v.Source.indexArgs()...), probeArgs...), requirements...)
	if err := v.runInstaller(ctx, log, v.resolveEnv(), v.Python(), args...); err != nil {
		if unreachable != nil {
			err = fmt.Errorf("%w (%v)", err, unreachable)
		}
		return nil, errorf("resolving the dependencies", v.offlineURLError(err))
	}
	data, err := os.ReadFile(reportPath)
	if err != nil {
		return nil, fmt.Errorf("reading pip's report of the resolution: %w", err)
	}
	var r report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("reading pip's report of the resolution: %w", err)
	}
	pins := map[string]pin{}
	for _, it := range r.Install {
		p := pin{name: it.Metadata.Name, version: it.Metadata.Version, url: it.DownloadInfo.URL, direct: it.IsDirect}
		p.target = p.name + "==" + p.version
		if vcs := it.DownloadInfo.VCSInfo; p.direct && vcs != nil {
			p.target = p.name + " @ " + vcs.VCS + "+" + p.url + "@" + vcs.CommitID
		} else if p.direct {
			p.target = p.name + " @ " + p.url
		}
		if a := it.DownloadInfo.ArchiveInfo; a != nil {
			p.sha256 = a.Hashes["sha256"]
		}
		if runtimeDist(p.name) {
			return nil, fmt.Errorf("refused: the resolution would replace %s, part of the apps venv's runtime, with %s %s", p.name, p.name, p.version)
		}
		pins[Normalize(p.name)] = p
	}
	return pins, nil
}

var pipURL = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`with url: (\S+)`) })

// offlineURLError names the URL an offline resolution tried to reach.
func (v *Venv) offlineURLError(err error) error {
	if !v.Source.Offline {
		return err
	}
	if m := pipURL().FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("refused: a dependency names the URL %s, and an offline install never downloads", apps.RedactURL(m[1]))
	}
	return err
}

func (v *Venv) resolveEnv() []string {
	if v.Source.Offline {
		return append(slices.Clone(v.ResolveEnv), offlineEnv...)
	}
	return v.ResolveEnv
}

// readPinned reads the downloaded wheels and checks that they are what the resolution named: one
// per distribution, at its version, with the hash pip resolved when the file is the one it found.
func readPinned(dir string, pins map[string]pin) ([]apps.Wheel, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.whl"))
	var out []apps.Wheel
	seen := map[string]bool{}
	for _, f := range files {
		w, err := ReadWheel(f)
		if err != nil {
			return nil, err
		}
		name := Normalize(w.Name)
		p, ok := pins[name]
		switch {
		case !ok:
			return nil, fmt.Errorf("the download brought %s %s, which the resolution did not name", w.Name, w.Version)
		case seen[name]:
			return nil, fmt.Errorf("the download brought two wheels of %s", w.Name)
		case w.Version != p.version:
			return nil, fmt.Errorf("the download brought %s %s, but the resolution chose %s", w.Name, w.Version, p.version)
		}
		if p.sha256 != "" && filepath.Base(f) == filepath.Base(p.url) {
			if sum, err := fileSHA256(f); err != nil || sum != p.sha256 {
				return nil, fmt.Errorf("the downloaded %s does not have the hash the resolution found: the index changed it in between", filepath.Base(f))
			}
		}
		seen[name] = true
		out = append(out, w)
	}
	for name, p := range pins {
		if !seen[name] {
			return nil, fmt.Errorf("the download brought no wheel of %s %s", p.name, p.version)
		}
	}
	return out, nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
