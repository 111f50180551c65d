package apps

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
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

// SDKDependencies returns the requirements of the embedded SDK (numpy, scipy, pydantic, fastapi,
// uvicorn with their version ranges): the dependencies of its pyproject.toml's [project].
func SDKDependencies(sdk fs.FS) []string {
	var pp struct {
		Project struct {
			Dependencies []string `toml:"dependencies"`
		} `toml:"project"`
	}
	data, err := fs.ReadFile(sdk, "pyproject.toml")
	if err != nil {
		return nil
	}
	if _, err := toml.Decode(string(data), &pp); err != nil {
		return nil
	}
	return pp.Project.Dependencies
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

// MissingSDKDependencies returns the SDK's requirements (those of sdk's pyproject.toml) whose
// distributions tc's Python cannot find (with --system-site-packages, the system's builds count:
// Debian's python3-numpy and the others).
func MissingSDKDependencies(ctx context.Context, tc Toolchain, sdk fs.FS) ([]string, error) {
	reqs := SDKDependencies(sdk)
	if len(reqs) == 0 {
		return nil, nil
	}
	byName := map[string]string{}
	var names []string
	for _, r := range reqs {
		name := requirementName(r)
		names = append(names, name)
		byName[name] = r
	}
	out, err := exec.CommandContext(ctx, tc.Python(), append([]string{"-c", missingDistributions}, names...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("checking the SDK's dependencies: %w", err)
	}
	var missing []string
	for _, name := range strings.Fields(string(out)) {
		missing = append(missing, byName[name])
	}
	return missing, nil
}

// InstallSDKDependencies installs requirements (MissingSDKDependencies) into tc's venv from its
// package source, like any app's dependencies; the error says how to bring them without an index.
func InstallSDKDependencies(ctx context.Context, tc Toolchain, log io.Writer, missing []string) error {
	fmt.Fprintf(log, "Installing the robot SDK's dependencies: %s\n", strings.Join(missing, " "))
	dir, err := os.MkdirTemp("", "robot-sdk-deps-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	wheels, err := tc.Resolve(ctx, log, Resolution{Requirements: missing, Dir: dir})
	if err == nil {
		paths := make([]string, len(wheels))
		for i, w := range wheels {
			paths[i] = w.Path
		}
		err = tc.Install(ctx, log, paths...)
	}
	if err != nil {
		return fmt.Errorf("%s could not be installed (%v): %s", strings.Join(missing, ", "), err, SDKDependenciesHint)
	}
	return nil
}

// SDKDependenciesHint says how to bring the SDK's dependencies where no package index is.
const SDKDependenciesHint = "give a package index (--index-url), or use the system's builds (--python /usr/bin/python3 " +
	"--system-site-packages, with Debian's python3-numpy python3-scipy python3-pydantic python3-fastapi python3-uvicorn)"

// ensureSDKDependencies brings the SDK's missing dependencies into the apps venv. A failed attempt
// is not repeated at every start with the same SDK and package source: an unreachable index costs
// pip 8 s of retries; a new SDK or venv tries again.
func (m *Manager) ensureSDKDependencies(ctx context.Context, log io.Writer) error {
	missing, err := MissingSDKDependencies(ctx, m.py, m.cfg.SDK)
	if err != nil || len(missing) == 0 {
		return err
	}
	marker := filepath.Join(m.py.VenvDir(), "robot-sdk-dependencies.failed")
	attempt := m.SDKVersion()
	if prev, err := os.ReadFile(marker); err == nil && string(prev) == attempt {
		return fmt.Errorf("%s could not be installed when this SDK was last tried: %s", strings.Join(missing, ", "), SDKDependenciesHint)
	}
	if err := InstallSDKDependencies(ctx, m.py, log, missing); err != nil {
		_ = os.WriteFile(marker, []byte(attempt), 0o644)
		return err
	}
	_ = os.Remove(marker)
	return nil
}
