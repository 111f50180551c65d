// Package version reports the version of the robothub binaries, set at link time by the Makefile
// and otherwise read from the module's build information.
package version

import "runtime/debug"

// Version is overridden with -ldflags "-X github.com/robothub/robothub/core/version.Version=...".
var Version = ""

// String returns the version of the running binary: the link-time value, else the module version,
// else the VCS revision, else "dev".
func String() string {
	if Version != "" {
		return Version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "dev-" + s.Value[:12]
		}
	}
	return "dev"
}
