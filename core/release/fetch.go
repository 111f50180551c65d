package release

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/hub"
)

// Source is a release repository at one commit: Get returns one of its files (a path such as
// releases/1.2.0/SHA256SUMS).
type Source interface {
	Get(ctx context.Context, path string) ([]byte, error)
}

// HubSource opens the release repository on a hub at its head: every file it then gets is of that
// one commit, so that a release being published meanwhile is never read half old, half new.
func HubSource(ctx context.Context, c *hub.Client, r Repo) (Source, string, error) {
	rev, err := c.Revision(ctx, r.Type, r.ID, "main")
	if err != nil {
		return nil, "", fmt.Errorf("the release repository %s: %w", r, err)
	}
	return hubSource{c: c, repo: r, commit: rev.SHA}, rev.SHA, nil
}

type hubSource struct {
	c      *hub.Client
	repo   Repo
	commit string
}

func (s hubSource) Get(ctx context.Context, path string) ([]byte, error) {
	data, err := s.c.Download(ctx, s.repo.Type, s.repo.ID, s.commit, path)
	if err != nil {
		return nil, fmt.Errorf("%s of %s: %w", path, s.repo, err)
	}
	return data, nil
}

// Available reads channels.json: the newest version of each channel.
func Available(ctx context.Context, src Source) (*Index, error) {
	data, err := src.Get(ctx, "channels.json")
	if err != nil {
		return nil, err
	}
	return ParseIndex(data)
}

// Checked is a release whose signature, manifest and checksums were checked.
type Checked struct {
	Version  Version
	Manifest *Manifest
	Sums     Sums
}

// Check downloads and checks v's signed checksums and manifest: the signature with key, the
// trusted comment naming v, release.json's checksum and version.
func Check(ctx context.Context, src Source, key Key, v Version) (*Checked, error) {
	dir := Dir(v)
	sums, err := src.Get(ctx, dir+"/SHA256SUMS")
	if err != nil {
		return nil, err
	}
	sig, err := src.Get(ctx, dir+"/SHA256SUMS.minisig")
	if err != nil {
		return nil, err
	}
	if err := key.Verify(v, sums, sig); err != nil {
		return nil, err
	}
	list, err := ParseSums(sums)
	if err != nil {
		return nil, fmt.Errorf("release %s: %w", v, err)
	}
	data, err := src.Get(ctx, dir+"/release.json")
	if err != nil {
		return nil, err
	}
	if err := list.Check("release.json", sha256.Sum256(data)); err != nil {
		return nil, fmt.Errorf("release %s: %w", v, err)
	}
	m, err := ParseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("release %s: %w", v, err)
	}
	if m.Version != v.String() {
		return nil, fault.Invalidf("release %s: its release.json is of version %s: refused", v, m.Version)
	}
	return &Checked{Version: v, Manifest: m, Sums: list}, nil
}

// Fetch downloads the program of a checked release for goos/goarch into dst (a file that must not
// exist yet) and checks it: each part's checksum, the program's size and checksum once
// decompressed, and its CPU (the ELF header) on Linux. Anything wrong removes what was written.
func (c *Checked) Fetch(ctx context.Context, src Source, program, goos, goarch, dst string, progress func(string)) error {
	f, err := c.Manifest.Find(program, goos, goarch)
	if err != nil {
		return err
	}
	if progress == nil {
		progress = func(string) {}
	}
	var parts []io.Reader
	for _, p := range f.Parts {
		data, err := src.Get(ctx, Dir(c.Version)+"/"+p)
		if err != nil {
			return err
		}
		if err := c.Sums.Check(p, sha256.Sum256(data)); err != nil {
			return fmt.Errorf("release %s: %w", c.Version, err)
		}
		progress(fmt.Sprintf("downloaded %s (%d bytes), checksum ok", p, len(data)))
		parts = append(parts, bytes.NewReader(data))
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("making the release folder: %w", err)
	}
	if err := writeProgram(dst, f, io.MultiReader(parts...)); err != nil {
		return fmt.Errorf("release %s: %w", c.Version, err)
	}
	if goos == "linux" {
		if err := checkELF(dst, goarch); err != nil {
			os.Remove(dst)
			return fmt.Errorf("release %s: %s for %s/%s: %w", c.Version, program, goos, goarch, err)
		}
	}
	progress(fmt.Sprintf("%s %s for %s/%s: %d bytes, sha256 %s…, signature ok", program, c.Version, goos, goarch, f.Size, f.SHA256[:16]))
	return nil
}

// writeProgram decompresses gz into dst through a temporary file, checking the size and checksum
// the manifest gives, and makes it executable.
func writeProgram(dst string, f File, gz io.Reader) (err error) {
	zr, err := gzip.NewReader(gz)
	if err != nil {
		return fault.Invalidf("%s: not a gzip stream: %v", f.Parts[0], err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".download-*")
	if err != nil {
		return fmt.Errorf("writing into %s: %w", filepath.Dir(dst), err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(zr, f.Size+1))
	if err != nil {
		var pathErr *os.PathError
		if errors.As(err, &pathErr) {
			return fmt.Errorf("writing the program into %s: %w", filepath.Dir(dst), err)
		}
		return fault.Invalidf("%s: the program's data is damaged (%v): truncated or altered", f.Parts[0], err)
	}
	switch {
	case n < f.Size:
		return fault.Invalidf("the program is truncated: %d bytes of the %d release.json gives", n, f.Size)
	case n > f.Size:
		return fault.Invalidf("the program is longer than the %d bytes release.json gives", f.Size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != f.SHA256 {
		return fault.Invalidf("the program's checksum %s… is not the %s… release.json gives: altered", got[:16], f.SHA256[:16])
	}
	if err := tmp.Chmod(0o755); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("writing the program into %s: %w", filepath.Dir(dst), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the program into %s: %w", filepath.Dir(dst), err)
	}
	return os.Rename(tmp.Name(), dst)
}

var elfMachines = map[string]elf.Machine{
	"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64, "arm": elf.EM_ARM, "386": elf.EM_386, "riscv64": elf.EM_RISCV,
}

// checkELF reports whether the file at path is an ELF executable for goarch.
func checkELF(path, goarch string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fault.Invalidf("not an ELF executable: %v", err)
	}
	defer f.Close()
	want, known := elfMachines[goarch]
	if known && f.Machine != want {
		return fault.Invalidf("the program is built for %s (ELF machine %s), not for this robot's %s: refused", archOf(f.Machine), f.Machine, goarch)
	}
	return nil
}

func archOf(m elf.Machine) string {
	for arch, em := range elfMachines {
		if em == m {
			return arch
		}
	}
	return "another CPU"
}
