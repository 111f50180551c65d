package release

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/robothub/robothub/core/fault"
)

// Binary is one program of a release, built for one OS and CPU.
type Binary struct {
	Program, OS, Arch string
	Data              []byte
}

// RepoFile is a file of the release repository: its path there and its content.
type RepoFile struct {
	Path    string
	Content []byte
}

var binaryName = regexp.MustCompile(`^([a-z][a-z0-9-]*)_([a-z0-9]+)_([a-z0-9]+)$`)

// ParseBinaryName reads a built program's file name, <program>_<os>_<arch> (an .exe suffix
// dropped): what `make release` names them.
func ParseBinaryName(name string) (program, goos, goarch string, err error) {
	m := binaryName.FindStringSubmatch(stripExe(name))
	if m == nil {
		return "", "", "", fault.Invalidf("%q is not named <program>_<os>_<arch> (such as robot-daemon_linux_arm64)", clip(name))
	}
	return m[1], m[2], m[3], nil
}

func stripExe(s string) string {
	if len(s) > 4 && s[len(s)-4:] == ".exe" {
		return s[:len(s)-4]
	}
	return s
}

// Assemble makes the files of release v from its binaries: each gzipped and split into parts of
// at most partBytes (DefaultPartBytes when 0), release.json, SHA256SUMS and its signature by key.
func Assemble(v Version, bins []Binary, key SigningKey, partBytes int, now time.Time) ([]RepoFile, *Manifest, error) {
	if partBytes <= 0 {
		partBytes = DefaultPartBytes
	}
	if len(bins) == 0 {
		return nil, nil, fault.Invalidf("release %s: no programs", v)
	}
	m := &Manifest{V: ManifestVersion, Version: v.String(), Channel: v.Channel(), Created: now.UTC()}
	sums := Sums{}
	var files []RepoFile
	seen := map[string]bool{}
	for _, b := range bins {
		id := b.Program + " " + b.OS + "/" + b.Arch
		if seen[id] {
			return nil, nil, fault.Invalidf("release %s: %s is given twice", v, id)
		}
		seen[id] = true
		if len(b.Data) == 0 || len(b.Data) > MaxProgramBytes {
			return nil, nil, fault.Invalidf("release %s: %s is %d bytes, not 1 to %d", v, id, len(b.Data), MaxProgramBytes)
		}
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		if _, err := zw.Write(b.Data); err != nil {
			return nil, nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, nil, err
		}
		sum := sha256.Sum256(b.Data)
		f := File{Program: b.Program, OS: b.OS, Arch: b.Arch, Size: int64(len(b.Data)), SHA256: hex.EncodeToString(sum[:])}
		data := gz.Bytes()
		n := (len(data) + partBytes - 1) / partBytes
		for k := range n {
			part := data[k*partBytes : min(len(data), (k+1)*partBytes)]
			name := PartName(b.Program, b.OS, b.Arch, k, n)
			ps := sha256.Sum256(part)
			sums[name] = hex.EncodeToString(ps[:])
			f.Parts = append(f.Parts, name)
			files = append(files, RepoFile{Path: Dir(v) + "/" + name, Content: part})
		}
		m.Files = append(m.Files, f)
	}
	manifest, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	ms := sha256.Sum256(manifest)
	sums["release.json"] = hex.EncodeToString(ms[:])
	sumsText := sums.Bytes()
	files = append(files,
		RepoFile{Path: Dir(v) + "/release.json", Content: manifest},
		RepoFile{Path: Dir(v) + "/SHA256SUMS", Content: sumsText},
		RepoFile{Path: Dir(v) + "/SHA256SUMS.minisig", Content: key.Sign(v, sumsText)},
	)
	if _, err := ParseManifest(manifest); err != nil {
		return nil, nil, fmt.Errorf("the manifest made: %w", err)
	}
	return files, m, nil
}
