// Package spec is what a release is, apart from fetching, checking and installing one: versions,
// channels, the manifest, the checksums, the channels index and the repository that holds them
// (package release has the rest, and aliases these). A receiver that announces a daemon release
// (internal/actions' fleet routes with daemon=) reads channels.json with this package alone, so
// that the Lambda bootstrap links no minisign, no ELF reader and no updater: 0.08 MB of it
// (docs/BENCHMARKS.md, issue 31).
package spec

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	goversion "github.com/hashicorp/go-version"

	"github.com/robothub/robothub/core/fault"
)

// Channels a release is published to. A robot on the pre-release channel takes the newest of both.
const (
	Stable     = "stable"
	PreRelease = "pre-release"
)

// DefaultRepo is the hub repository of the project's daemon releases: a model repo.
const DefaultRepo = "robothub/robot-daemon"

// Program is the daemon's program name in a release.
const Program = "robot-daemon"

// ManifestVersion is the version of release.json and channels.json that this package writes and
// reads.
const ManifestVersion = 1

// MaxProgramBytes bounds a program of a release, decompressed: a robot refuses a manifest that
// says more before it downloads anything.
const MaxProgramBytes = 512 << 20

// DefaultPartBytes is the size of a part of a published program: under the hub's 10 MiB limit for a
// file sent inline in a commit, with room for a larger binary than today's (8 MB gzipped).
const DefaultPartBytes = 8 << 20

// Version is a release's version: semantic versioning, an optional leading "v" dropped
// ("1.2.0", "1.3.0-rc.1").
type Version struct {
	v   *goversion.Version
	raw string
}

var versionText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)
})

// ParseVersion reads a release version.
func ParseVersion(s string) (Version, error) {
	s = strings.TrimSpace(s)
	if !versionText().MatchString(s) {
		return Version{}, fault.Invalidf("version %q is not a release version (MAJOR.MINOR.PATCH, optionally -PRERELEASE, such as 1.2.0 or 1.3.0-rc.1)", clip(s))
	}
	v, err := goversion.NewSemver(s)
	if err != nil {
		return Version{}, fault.Invalidf("version %q: %v", clip(s), err)
	}
	return Version{v: v, raw: strings.TrimPrefix(s, "v")}, nil
}

// RunningVersion reads the version a daemon binary reports (core/version.String): a release
// version, or a development build ("dev", a commit, git describe's v1.2.0-3-gabc), which is older
// than every release so that any release updates it.
func RunningVersion(s string) Version {
	if v, err := ParseVersion(s); err == nil {
		return v
	}
	v, _ := goversion.NewSemver("0.0.0-dev")
	return Version{v: v, raw: s}
}

func (v Version) String() string { return v.raw }

// IsZero reports whether v was never set.
func (v Version) IsZero() bool { return v.v == nil }

// Compare returns -1, 0 or 1 as v is older than, the same as, or newer than w.
func (v Version) Compare(w Version) int { return v.v.Compare(w.v) }

// Channel is the channel a version belongs to: a pre-release version (1.3.0-rc.1) to the
// pre-release channel, the others to stable.
func (v Version) Channel() string {
	if v.v.Prerelease() != "" {
		return PreRelease
	}
	return Stable
}

// CheckChannel reports whether name is a channel.
func CheckChannel(name string) error {
	if name != Stable && name != PreRelease {
		return fault.Invalidf("channel %q is not one of %s, %s", clip(name), Stable, PreRelease)
	}
	return nil
}

// Manifest is release.json: what a release holds.
type Manifest struct {
	V       int       `json:"v"`
	Version string    `json:"version"`
	Channel string    `json:"channel"`
	Created time.Time `json:"created"`
	Files   []File    `json:"files"`
}

// File is one program of a release for one OS and CPU.
type File struct {
	Program string   `json:"program"`
	OS      string   `json:"os"`
	Arch    string   `json:"arch"`
	Size    int64    `json:"size"`   // of the program, decompressed
	SHA256  string   `json:"sha256"` // of the program, decompressed
	Parts   []string `json:"parts"`  // the files of the release folder that, concatenated, are its gzip stream
}

// Find returns the file of program for goos/goarch.
func (m *Manifest) Find(program, goos, goarch string) (File, error) {
	var have []string
	for _, f := range m.Files {
		if f.Program != program {
			continue
		}
		if f.OS == goos && f.Arch == goarch {
			return f, nil
		}
		have = append(have, f.OS+"/"+f.Arch)
	}
	if len(have) == 0 {
		return File{}, fault.NotFoundf("release %s has no %s at all", m.Version, program)
	}
	return File{}, fault.NotFoundf("release %s has no %s for %s/%s (this robot): it has %s", m.Version, program, goos, goarch, strings.Join(have, ", "))
}

var (
	partName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,127}$`) })
	hexSum   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{64}$`) })
)

// ParseManifest reads and checks release.json.
func ParseManifest(data []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fault.Invalidf("release.json: %v", err)
	}
	if m.V != ManifestVersion {
		return nil, fault.Invalidf("release.json: version %d of the format, want %d", m.V, ManifestVersion)
	}
	v, err := ParseVersion(m.Version)
	if err != nil {
		return nil, fmt.Errorf("release.json: %w", err)
	}
	if m.Channel != v.Channel() {
		return nil, fault.Invalidf("release.json: version %s belongs to the %s channel, not %q", m.Version, v.Channel(), clip(m.Channel))
	}
	for _, f := range m.Files {
		switch {
		case f.Size <= 0 || f.Size > MaxProgramBytes:
			return nil, fault.Invalidf("release.json: %s for %s/%s: size %d is not 1 to %d bytes", f.Program, f.OS, f.Arch, f.Size, MaxProgramBytes)
		case !hexSum().MatchString(f.SHA256):
			return nil, fault.Invalidf("release.json: %s for %s/%s: sha256 %q is not 64 hex digits", f.Program, f.OS, f.Arch, clip(f.SHA256))
		case len(f.Parts) == 0:
			return nil, fault.Invalidf("release.json: %s for %s/%s has no parts", f.Program, f.OS, f.Arch)
		}
		for _, p := range f.Parts {
			if !partName().MatchString(p) {
				return nil, fault.Invalidf("release.json: part %q is not a file name of the release folder", clip(p))
			}
		}
	}
	return &m, nil
}

// Sums are the checksums of SHA256SUMS: file name -> sha256, hex.
type Sums map[string]string

// ParseSums reads sha256sum(1) output ("<hex>  <name>" or "<hex> *<name>" per line).
func ParseSums(data []byte) (Sums, error) {
	out := Sums{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		sum, name, ok := strings.Cut(line, " ")
		name = strings.TrimPrefix(strings.TrimPrefix(name, " "), "*")
		if !ok || !hexSum().MatchString(sum) || !partName().MatchString(name) {
			return nil, fault.Invalidf("SHA256SUMS line %d: want \"<sha256>  <file>\", got %q", n, clip(line))
		}
		if _, dup := out[name]; dup {
			return nil, fault.Invalidf("SHA256SUMS line %d: %s is listed twice", n, name)
		}
		out[name] = sum
	}
	return out, nil
}

// Bytes writes the sums as sha256sum(1) does, sorted by name.
func (s Sums) Bytes() []byte {
	var b bytes.Buffer
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range s {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(&b, "%s  %s\n", s[name], name)
	}
	return b.Bytes()
}

// Check reports whether data is the file name as the sums list it.
func (s Sums) Check(name string, sum [32]byte) error {
	want, ok := s[name]
	if !ok {
		return fault.Invalidf("%s is not listed in SHA256SUMS", name)
	}
	if got := hex.EncodeToString(sum[:]); got != want {
		return fault.Invalidf("%s: checksum %s, SHA256SUMS says %s: the file is truncated or altered", name, got[:16]+"…", want[:16]+"…")
	}
	return nil
}

// Index is channels.json: the newest version of each channel.
type Index struct {
	V        int               `json:"v"`
	Channels map[string]string `json:"channels"`
}

// ParseIndex reads channels.json.
func ParseIndex(data []byte) (*Index, error) {
	var ix Index
	if err := json.Unmarshal(data, &ix); err != nil {
		return nil, fault.Invalidf("channels.json: %v", err)
	}
	if ix.V != ManifestVersion {
		return nil, fault.Invalidf("channels.json: version %d of the format, want %d", ix.V, ManifestVersion)
	}
	for ch, v := range ix.Channels {
		if err := CheckChannel(ch); err != nil {
			return nil, fmt.Errorf("channels.json: %w", err)
		}
		if _, err := ParseVersion(v); err != nil {
			return nil, fmt.Errorf("channels.json: channel %s: %w", ch, err)
		}
	}
	return &ix, nil
}

// Newest returns the newest version the index offers on channel (pre-release: the newest of both).
func (ix *Index) Newest(channel string) (Version, bool) {
	var best Version
	for ch, s := range ix.Channels {
		if ch != channel && channel != PreRelease {
			continue
		}
		v, err := ParseVersion(s)
		if err == nil && (best.IsZero() || v.Compare(best) > 0) {
			best = v
		}
	}
	return best, !best.IsZero()
}

// With returns the index with v as its channel's newest, unless that channel has a newer one.
func (ix *Index) With(v Version) *Index {
	out := &Index{V: ManifestVersion, Channels: map[string]string{}}
	if ix != nil {
		for k, s := range ix.Channels {
			out.Channels[k] = s
		}
	}
	ch := v.Channel()
	if cur, err := ParseVersion(out.Channels[ch]); err != nil || v.Compare(cur) > 0 {
		out.Channels[ch] = v.String()
	}
	return out
}

// PartName is the name of part k of n of a program's gzip stream.
func PartName(program, goos, goarch string, k, n int) string {
	base := fmt.Sprintf("%s_%s_%s.gz", program, goos, goarch)
	if n == 1 {
		return base
	}
	return fmt.Sprintf("%s.%03d", base, k)
}

// Dir is the folder of version in the release repository.
func Dir(v Version) string { return "releases/" + v.String() }

// Clip shortens a value quoted in an error message.
func Clip(s string) string { return clip(s) }

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// CheckTarget reports whether a robot running current may install target: a newer version, or
// an older one only when allowDowngrade says so.
func CheckTarget(current, target Version, allowDowngrade bool) error {
	switch c := target.Compare(current); {
	case c == 0:
		return fault.Refusedf("%s already runs: nothing to update", target)
	case c < 0 && !allowDowngrade:
		return fault.Refusedf("%s is older than the running %s: a downgrade needs allow_downgrade (--allow-downgrade)", target, current)
	}
	return nil
}

// Repo names a release repository on a hub: its type (model, dataset or space) and id.
type Repo struct {
	Type string // model, dataset or space
	ID   string // owner/name
}

// ParseRepo reads a release repository setting: "owner/name" (a model) or "<type>s/owner/name"
// (models/, datasets/ or spaces/).
func ParseRepo(s string) (Repo, error) {
	r := Repo{Type: "model", ID: s}
	for _, t := range []string{"model", "dataset", "space"} {
		if rest, ok := strings.CutPrefix(s, t+"s/"); ok {
			r = Repo{Type: t, ID: rest}
		}
	}
	owner, name, ok := strings.Cut(r.ID, "/")
	if !ok || owner == "" || name == "" || !partName().MatchString(strings.ToLower(owner)) || !partName().MatchString(strings.ToLower(name)) {
		return Repo{}, fault.Invalidf("release repository %q: want owner/name (a model) or models/, datasets/ or spaces/owner/name", clip(s))
	}
	return r, nil
}

func (r Repo) String() string { return r.Type + "s/" + r.ID }

// Bytes encodes channels.json.
func (ix *Index) Bytes() []byte {
	data, _ := json.MarshalIndent(ix, "", "  ")
	return append(data, '\n')
}
