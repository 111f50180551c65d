package release_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/release"
)

// fakeELF is an ELF64 executable header for machine, padded to size bytes: what debug/elf reads
// of a program, without building one.
func fakeELF(machine elf.Machine, size int) []byte {
	b := make([]byte, size)
	copy(b, elf.ELFMAG)
	b[elf.EI_CLASS], b[elf.EI_DATA], b[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	binary.LittleEndian.PutUint16(b[16:], uint16(elf.ET_EXEC))
	binary.LittleEndian.PutUint16(b[18:], uint16(machine))
	binary.LittleEndian.PutUint32(b[20:], uint32(elf.EV_CURRENT))
	binary.LittleEndian.PutUint16(b[52:], 64) // e_ehsize
	rng := rand.New(rand.NewPCG(uint64(machine), uint64(size)))
	for i := 64; i < size; i++ {
		b[i] = byte(rng.Uint32()) // does not compress: the parts are as many as the program's size says
	}
	return b
}

// repo is a release repository in memory.
type repo map[string][]byte

func (r repo) Get(_ context.Context, path string) ([]byte, error) {
	data, ok := r[path]
	if !ok {
		return nil, fault.NotFoundf("%s: no such file", path)
	}
	return data, nil
}

func (r repo) add(files []release.RepoFile) {
	for _, f := range files {
		r[f.Path] = f.Content
	}
}

func signingKey(t testing.TB) release.SigningKey {
	t.Helper()
	_, secret, err := release.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	k, err := release.ParseSigningKey(secret, "")
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustVersion(t testing.TB, s string) release.Version {
	t.Helper()
	v, err := release.ParseVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// publish assembles a release of robot-daemon for linux/amd64 and linux/arm64 into r, in parts of
// 4 KiB, and returns the amd64 program.
func publish(t testing.TB, r repo, key release.SigningKey, version string) []byte {
	t.Helper()
	amd64, arm64 := fakeELF(elf.EM_X86_64, 20000), fakeELF(elf.EM_AARCH64, 18000)
	v := mustVersion(t, version)
	files, _, err := release.Assemble(v, []release.Binary{
		{Program: release.Program, OS: "linux", Arch: "amd64", Data: amd64},
		{Program: release.Program, OS: "linux", Arch: "arm64", Data: arm64},
	}, key, 4096, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r.add(files)
	var ix *release.Index
	if data, ok := r["channels.json"]; ok {
		if ix, err = release.ParseIndex(data); err != nil {
			t.Fatal(err)
		}
	}
	r["channels.json"] = ix.With(v).Bytes()
	return amd64
}

func fetch(r repo, key release.SigningKey, version, arch, dst string) error {
	v, err := release.ParseVersion(version)
	if err != nil {
		return err
	}
	c, err := release.Check(context.Background(), r, key.Public(), v)
	if err != nil {
		return err
	}
	return c.Fetch(context.Background(), r, release.Program, "linux", arch, dst, nil)
}

func TestPublishedReleaseIsFetchedWhole(t *testing.T) {
	key := signingKey(t)
	r := repo{}
	publish(t, r, key, "1.1.0")
	want := publish(t, r, key, "1.2.0")
	publish(t, r, key, "1.3.0-rc.1")
	if n := len(strings.Fields(string(r["releases/1.2.0/SHA256SUMS"]))) / 2; n < 4 {
		t.Fatalf("SHA256SUMS lists %d files: want release.json and several parts", n)
	}
	ix, err := release.Available(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := ix.Newest(release.Stable); v.String() != "1.2.0" {
		t.Errorf("newest stable: %s, want 1.2.0", v)
	}
	if v, _ := ix.Newest(release.PreRelease); v.String() != "1.3.0-rc.1" {
		t.Errorf("newest pre-release: %s, want 1.3.0-rc.1", v)
	}
	dst := filepath.Join(t.TempDir(), "1.2.0", release.Program)
	if err := fetch(r, key, "1.2.0", "amd64", dst); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(dst)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("fetched program: %d bytes (err %v), want the published %d", len(got), err, len(want))
	}
	if fi, _ := os.Stat(dst); fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("fetched program mode %v: not executable", fi.Mode())
	}
}

// Each bad release is refused with an error naming what is wrong, and nothing is left where the
// program would go.
func TestBadReleasesAreRefused(t *testing.T) {
	key := signingKey(t)
	cases := []struct {
		name   string
		arch   string
		break_ func(r repo)
		want   string
	}{
		{"a truncated part", "amd64", func(r repo) {
			p := "releases/1.2.0/robot-daemon_linux_amd64.gz.001"
			r[p] = r[p][:len(r[p])/2]
		}, "robot-daemon_linux_amd64.gz.001: checksum"},
		{"a truncated program, re-checksummed and re-signed by another key", "amd64", func(r repo) {
			other := signingKey(t)
			p := "releases/1.2.0/robot-daemon_linux_amd64.gz.001"
			r[p] = r[p][:10]
			sums, _ := release.ParseSums(r["releases/1.2.0/SHA256SUMS"])
			sums["robot-daemon_linux_amd64.gz.001"] = sha(r[p])
			r["releases/1.2.0/SHA256SUMS"] = sums.Bytes()
			r["releases/1.2.0/SHA256SUMS.minisig"] = other.Sign(mustVersion(t, "1.2.0"), sums.Bytes())
		}, "not by the release key"},
		{"checksums altered after signing", "amd64", func(r repo) {
			r["releases/1.2.0/SHA256SUMS"] = append(r["releases/1.2.0/SHA256SUMS"], []byte(sha([]byte("x"))+"  extra\n")...)
		}, "altered after signing"},
		{"another version's signature", "amd64", func(r repo) {
			r["releases/1.2.0/SHA256SUMS.minisig"] = key.Sign(mustVersion(t, "1.1.0"), r["releases/1.2.0/SHA256SUMS"])
		}, `made for "robothub release 1.1.0"`},
		{"a release without this robot's CPU", "riscv64", func(repo) {}, "has no robot-daemon for linux/riscv64 (this robot): it has linux/amd64, linux/arm64"},
		{"a program for another CPU under this robot's name", "amd64", func(r repo) {
			files, _, err := release.Assemble(mustVersion(t, "1.2.0"), []release.Binary{
				{Program: release.Program, OS: "linux", Arch: "amd64", Data: fakeELF(elf.EM_AARCH64, 9000)}}, key, 0, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			r.add(files)
		}, "built for arm64 (ELF machine EM_AARCH64), not for this robot's amd64"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := repo{}
			publish(t, r, key, "1.2.0")
			c.break_(r)
			dst := filepath.Join(t.TempDir(), release.Program)
			err := fetch(r, key, "1.2.0", c.arch, dst)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			if entries, _ := os.ReadDir(filepath.Dir(dst)); len(entries) != 0 {
				t.Errorf("left behind: %v", entries)
			}
		})
	}
}

func TestDowngradeNeedsAllowDowngrade(t *testing.T) {
	cur, old, newer := mustVersion(t, "1.2.0"), mustVersion(t, "1.1.0"), mustVersion(t, "1.3.0")
	if err := release.CheckTarget(cur, old, false); err == nil || !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), "allow_downgrade") {
		t.Errorf("downgrade without allow_downgrade: %v", err)
	}
	if err := release.CheckTarget(cur, old, true); err != nil {
		t.Errorf("downgrade with allow_downgrade: %v", err)
	}
	if err := release.CheckTarget(cur, newer, false); err != nil {
		t.Errorf("upgrade: %v", err)
	}
	if err := release.CheckTarget(cur, cur, true); err == nil || !strings.Contains(err.Error(), "already runs") {
		t.Errorf("same version: %v", err)
	}
	if release.RunningVersion("dev-0123456789ab").Compare(old) >= 0 {
		t.Error("a development build must be older than every release")
	}
}

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
