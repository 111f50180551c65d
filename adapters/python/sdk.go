package python

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
	"sync"
)

// describeVersion matches `git describe --tags --dirty`: v1.2.3, 1.2.3rc1, v1.2.3-4-gabcdef0-dirty.
var describeVersion = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^v?(\d+(?:\.\d+)*(?:(?:a|b|rc)\d+)?)(?:-(\d+)-g([0-9a-f]+))?(-dirty)?$`)
})

// SDKVersion maps the daemon's version to the PEP 440 version the SDK is installed at: a release
// tag gives that version (v1.2.3 → 1.2.3); commits after a tag a local version
// (v1.2.3-4-gabc1234-dirty → 1.2.3+4.gabc1234.dirty.sdk<h>); anything else ("dev", a commit)
// 0.0.0.dev0+<commit>.sdk<h>. <h> (10 hex digits of the SDK files' SHA-256) makes a development
// daemon whose SDK changed reinstall it even when the commit did not change.
func SDKVersion(daemonVersion string, sdk fs.FS) string {
	v := strings.TrimSpace(daemonVersion)
	sum := "sdk" + sdkDigest(sdk)[:10]
	if m := describeVersion().FindStringSubmatch(v); m != nil {
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

var pyprojectVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^version\s*=\s*"[^"]*"`) })

// WriteSDK writes the embedded SDK's source (pyproject.toml, robot_sdk/) into dir at version.
func WriteSDK(dir string, sdk fs.FS, version string) error {
	err := fs.WalkDir(sdk, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := fs.ReadFile(sdk, p)
		if err != nil {
			return err
		}
		if p == "pyproject.toml" {
			if !pyprojectVersion().Match(data) {
				return fmt.Errorf("the SDK's pyproject.toml has no version line")
			}
			data = pyprojectVersion().ReplaceAll(data, []byte(`version = "`+version+`"`))
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		return fmt.Errorf("writing the robot SDK: %w", err)
	}
	return nil
}

// InstallSDK installs the embedded SDK at version, replacing what is installed. It needs nothing
// but the standard library and builds with the venv's setuptools: no index, online or not.
func (v *Venv) InstallSDK(ctx context.Context, log io.Writer, sdk fs.FS, version string) error {
	tmp, err := os.MkdirTemp("", "robot-sdk-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := WriteSDK(tmp, sdk, version); err != nil {
		return err
	}
	name, args := v.installCommand(true, tmp)
	return v.runInstaller(ctx, log, nil, name, args...)
}
