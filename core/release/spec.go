package release

import "github.com/robothub/robothub/core/release/spec"

// What a release is lives in core/release/spec, which links none of the signing, fetching and
// installing below: a receiver that reads channels.json imports spec alone. These are its names
// here, for the daemon and the CLI.

// Channels a release is published to. A robot on the pre-release channel takes the newest of both.
const (
	Stable     = spec.Stable
	PreRelease = spec.PreRelease
)

const (
	DefaultRepo      = spec.DefaultRepo      // the hub repository of the project's daemon releases
	Program          = spec.Program          // the daemon's program name in a release
	ManifestVersion  = spec.ManifestVersion  // the version of release.json and channels.json
	MaxProgramBytes  = spec.MaxProgramBytes  // the largest program a release may hold
	DefaultPartBytes = spec.DefaultPartBytes // the size of a program's parts
)

type (
	Version  = spec.Version
	Manifest = spec.Manifest
	File     = spec.File
	Sums     = spec.Sums
	Index    = spec.Index
	Repo     = spec.Repo
)

func ParseVersion(s string) (Version, error)       { return spec.ParseVersion(s) }
func RunningVersion(s string) Version              { return spec.RunningVersion(s) }
func CheckChannel(name string) error               { return spec.CheckChannel(name) }
func ParseManifest(data []byte) (*Manifest, error) { return spec.ParseManifest(data) }
func ParseSums(data []byte) (Sums, error)          { return spec.ParseSums(data) }
func ParseIndex(data []byte) (*Index, error)       { return spec.ParseIndex(data) }
func ParseRepo(s string) (Repo, error)             { return spec.ParseRepo(s) }
func PartName(program, goos, goarch string, k, n int) string {
	return spec.PartName(program, goos, goarch, k, n)
}
func Dir(v Version) string { return spec.Dir(v) }
func CheckTarget(current, target Version, allowDowngrade bool) error {
	return spec.CheckTarget(current, target, allowDowngrade)
}

func clip(s string) string { return spec.Clip(s) }
