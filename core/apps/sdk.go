package apps

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// SDKDistribution is the Python distribution name of the embedded SDK.
const SDKDistribution = "robot-sdk"

// ensureSDK installs the embedded SDK at its version unless it is there; it reports whether it did.
func (m *Manager) ensureSDK(ctx context.Context, log io.Writer) (bool, error) {
	version := m.SDKVersion()
	have := m.py.InstalledVersion(SDKDistribution)
	if have == version {
		return false, nil
	}
	if have == "" {
		fmt.Fprintf(log, "Installing robot_sdk %s into the apps venv\n", version)
	} else {
		fmt.Fprintf(log, "Replacing robot_sdk %s with %s in the apps venv\n", have, version)
	}
	if err := m.py.InstallSDK(ctx, log, m.cfg.SDK, version); err != nil {
		return false, fmt.Errorf("installing robot_sdk %s: %w", version, err)
	}
	if got := m.py.InstalledVersion(SDKDistribution); got != version {
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
// and the others). It fails naming what is missing when they cannot be brought (offline, no
// index). A failed attempt is not repeated at every start with the same SDK and package source:
// an unreachable index costs pip 8 s of retries; a new SDK or venv tries again.
func (m *Manager) ensureSDKDependencies(ctx context.Context, log io.Writer) error {
	reqs := SDKDependencies(m.cfg.SDK)
	if len(reqs) == 0 {
		return nil
	}
	byName := map[string]string{}
	var names []string
	for _, r := range reqs {
		name := sdkDependency.FindStringSubmatch(`"` + r + `"`)[1]
		names = append(names, name)
		byName[name] = r
	}
	out, err := exec.CommandContext(ctx, m.py.Python(), append([]string{"-c", missingDistributions}, names...)...).Output()
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
	marker := filepath.Join(m.py.VenvDir(), "robot-sdk-dependencies.failed")
	attempt := m.SDKVersion()
	hint := "give the daemon a package index (--index-url), or use the system's builds (--python /usr/bin/python3 " +
		"--system-site-packages, with Debian's python3-numpy python3-scipy python3-pydantic python3-fastapi python3-uvicorn)"
	if prev, err := os.ReadFile(marker); err == nil && string(prev) == attempt {
		return fmt.Errorf("%s could not be installed when this SDK was last tried: %s", strings.Join(missing, ", "), hint)
	}
	fmt.Fprintf(log, "Installing the robot SDK's dependencies: %s\n", strings.Join(missing, " "))
	dir, err := os.MkdirTemp("", "robot-sdk-deps-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	wheels, err := m.py.Resolve(ctx, log, Resolution{Requirements: missing, Dir: dir})
	if err == nil {
		paths := make([]string, len(wheels))
		for i, w := range wheels {
			paths[i] = w.Path
		}
		err = m.py.Install(ctx, log, paths...)
	}
	if err != nil {
		_ = os.WriteFile(marker, []byte(attempt), 0o644)
		return fmt.Errorf("%s could not be installed (%v): %s", strings.Join(missing, ", "), err, hint)
	}
	_ = os.Remove(marker)
	return nil
}
