package apps

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// SDKDistribution is the Python distribution name of the embedded SDK.
const SDKDistribution = "robot-sdk"

// describeVersion matches `git describe --tags --dirty`: v1.2.3, 1.2.3rc1, v1.2.3-4-gabcdef0-dirty.
var describeVersion = regexp.MustCompile(`^v?(\d+(?:\.\d+)*(?:(?:a|b|rc)\d+)?)(?:-(\d+)-g([0-9a-f]+))?(-dirty)?$`)

// SDKVersion maps the daemon's version to the PEP 440 version the SDK is installed at: a release
// tag gives that version (v1.2.3 → 1.2.3); commits after a tag a local version
// (v1.2.3-4-gabc1234-dirty → 1.2.3+4.gabc1234.dirty.sdk<h>); anything else ("dev", a commit)
// 0.0.0.dev0+<commit>.sdk<h>. <h> (10 hex digits of the SDK files' SHA-256) makes a development
// daemon whose SDK changed reinstall it even when the commit did not change.
func SDKVersion(daemonVersion string, sdk fs.FS) string {
	v := strings.TrimSpace(daemonVersion)
	sum := "sdk" + sdkDigest(sdk)[:10]
	if m := describeVersion.FindStringSubmatch(v); m != nil {
		if m[2] == "" && m[4] == "" {
			return m[1]
		}
		var local []string
		if m[2] != "" {
			local = append(local, m[2], "g"+m[3])
		}
		if m[4] != "" {
			local = append(local, "dirty")
		}
		return m[1] + "+" + strings.Join(append(local, sum), ".")
	}
	local := strings.FieldsFunc(strings.ToLower(strings.TrimPrefix(v, "dev")), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	})
	return "0.0.0.dev0+" + strings.Join(append(local, sum), ".")
}

// sdkDigest hashes every file of the SDK, names and contents, in a fixed order.
func sdkDigest(sdk fs.FS) string {
	h := sha256.New()
	var paths []string
	_ = fs.WalkDir(sdk, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			paths = append(paths, p)
		}
		return nil
	})
	sort.Strings(paths)
	for _, p := range paths {
		data, _ := fs.ReadFile(sdk, p)
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

var pyprojectVersion = regexp.MustCompile(`(?m)^version\s*=\s*"[^"]*"`)

// ensureSDK installs the embedded SDK at version unless it is there; it reports whether it did.
func (v *Venv) ensureSDK(ctx context.Context, log io.Writer, sdk fs.FS, version string) (bool, error) {
	have := v.installedVersion(SDKDistribution)
	if have == version {
		return false, nil
	}
	if have == "" {
		fmt.Fprintf(log, "Installing robot_sdk %s into the apps venv\n", version)
	} else {
		fmt.Fprintf(log, "Replacing robot_sdk %s with %s in the apps venv\n", have, version)
	}
	tmp, err := os.MkdirTemp("", "robot-sdk-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	if err := os.CopyFS(tmp, sdk); err != nil {
		return false, err
	}
	pyproject := filepath.Join(tmp, "pyproject.toml")
	data, err := os.ReadFile(pyproject)
	if err != nil {
		return false, fmt.Errorf("embedded SDK has no pyproject.toml: %w", err)
	}
	if !pyprojectVersion.Match(data) {
		return false, fmt.Errorf("embedded SDK pyproject.toml has no version line")
	}
	data = pyprojectVersion.ReplaceAll(data, []byte(`version = "`+version+`"`))
	if err := os.WriteFile(pyproject, data, 0o644); err != nil {
		return false, err
	}
	// The SDK needs nothing but the standard library, and builds with the venv's setuptools: the
	// command reaches no index, online or not, and runs through the same installer as apps.
	if err := v.install(ctx, log, installOptions{noDeps: true, reinstall: true, noBuildIsolation: true}, tmp); err != nil {
		return false, fmt.Errorf("installing robot_sdk %s: %w", version, err)
	}
	if got := v.installedVersion(SDKDistribution); got != version {
		return false, fmt.Errorf("installed robot_sdk but the venv reports version %q, want %q", got, version)
	}
	return true, nil
}

// sdkDependency is one line of the dependencies list of the SDK's pyproject.toml: "numpy>=1.24,<3".
var sdkDependency = regexp.MustCompile(`(?m)^\s*"([A-Za-z0-9._-]+)([^"]*)",?\s*$`)

// SDKDependencies returns the requirements of the embedded SDK (numpy, scipy, pydantic, fastapi,
// uvicorn with their version ranges), as its pyproject.toml lists them.
func SDKDependencies(sdk fs.FS) []string {
	data, err := fs.ReadFile(sdk, "pyproject.toml")
	if err != nil {
		return nil
	}
	text := string(data)
	start := strings.Index(text, "\ndependencies = [")
	if start < 0 {
		return nil
	}
	end := strings.Index(text[start:], "\n]")
	if end < 0 {
		return nil
	}
	var out []string
	for _, m := range sdkDependency.FindAllStringSubmatch(text[start:start+end], -1) {
		out = append(out, m[1]+m[2])
	}
	return out
}

// missingDistributions is run by the venv's Python: it prints the distributions of its arguments
// that it cannot find (importlib.metadata sees the system's too with --system-site-packages).
const missingDistributions = `import sys
from importlib.metadata import PackageNotFoundError, version
for name in sys.argv[1:]:
    try:
        version(name)
    except PackageNotFoundError:
        print(name)
`

// ensureSDKDependencies installs the SDK's dependencies that the venv lacks, from the package index
// like any app's (with --system-site-packages, the system's builds count: Debian's python3-numpy
// and the others). It fails naming what is missing when the installer cannot bring it (offline,
// no index).
func (v *Venv) ensureSDKDependencies(ctx context.Context, log io.Writer, sdk fs.FS) error {
	reqs := SDKDependencies(sdk)
	if len(reqs) == 0 {
		return nil
	}
	names := make([]string, len(reqs))
	byName := map[string]string{}
	for i, r := range reqs {
		names[i] = sdkDependency.FindStringSubmatch(`"` + r + `"`)[1]
		byName[names[i]] = r
	}
	out, err := exec.CommandContext(ctx, v.Python(), append([]string{"-c", missingDistributions}, names...)...).Output()
	if err != nil {
		return fmt.Errorf("checking the SDK's dependencies: %w", err)
	}
	var missing []string
	for _, name := range strings.Fields(string(out)) {
		missing = append(missing, byName[name])
	}
	if len(missing) == 0 {
		return nil
	}
	// A failed attempt is not repeated at every start with the same SDK and package source: an
	// unreachable index costs pip 8 s of retries. A new SDK, index or --offline tries again.
	marker := filepath.Join(v.Dir, "robot-sdk-dependencies.failed")
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%+v", sdkDigest(sdk), v.Source)))
	attempt := hex.EncodeToString(sum[:])
	hint := "give the daemon a package index (--index-url), or use the system's builds (--python /usr/bin/python3 " +
		"--system-site-packages, with Debian's python3-numpy python3-scipy python3-pydantic python3-fastapi python3-uvicorn)"
	if prev, err := os.ReadFile(marker); err == nil && string(prev) == attempt {
		return fmt.Errorf("%s could not be installed when this SDK and package source were last tried: %s", strings.Join(missing, ", "), hint)
	}
	fmt.Fprintf(log, "Installing the robot SDK's dependencies: %s\n", strings.Join(missing, " "))
	if err := v.install(ctx, log, installOptions{}, missing...); err != nil {
		_ = os.WriteFile(marker, []byte(attempt), 0o644)
		return fmt.Errorf("%s could not be installed (%v): %s", strings.Join(missing, ", "), err, hint)
	}
	_ = os.Remove(marker)
	return nil
}
