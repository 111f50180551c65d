package apps

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
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

// ensureSDK installs the embedded SDK at its version unless it is there; it reports whether it did.
func (m *Manager) ensureSDK(ctx context.Context, log io.Writer) (bool, error) {
	sdk, version := m.cfg.SDK, m.SDKVersion()
	have := m.py.InstalledVersion(SDKDistribution)
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
	if err := m.py.InstallSource(ctx, log, tmp); err != nil {
		return false, fmt.Errorf("installing robot_sdk %s: %w", version, err)
	}
	if got := m.py.InstalledVersion(SDKDistribution); got != version {
		return false, fmt.Errorf("installed robot_sdk but the venv reports version %q, want %q", got, version)
	}
	return true, nil
}
