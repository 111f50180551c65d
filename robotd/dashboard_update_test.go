package robotd_test

import (
	"context"
	"crypto/rand"
	"debug/elf"
	bin "encoding/binary"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/release"
)

type memReleases map[string][]byte

func (m memReleases) Get(_ context.Context, p string) ([]byte, error) {
	if d, ok := m[p]; ok {
		return d, nil
	}
	return nil, fault.NotFoundf("%s: not found", p)
}

// amd64Program is an ELF header for amd64 and random bytes: a release's program the test never runs.
func amd64Program() []byte {
	b := make([]byte, 4096)
	copy(b, elf.ELFMAG)
	b[elf.EI_CLASS], b[elf.EI_DATA], b[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	bin.LittleEndian.PutUint16(b[16:], uint16(elf.ET_EXEC))
	bin.LittleEndian.PutUint16(b[18:], uint16(elf.EM_X86_64))
	bin.LittleEndian.PutUint32(b[20:], uint32(elf.EV_CURRENT))
	bin.LittleEndian.PutUint16(b[52:], 64)
	_, _ = rand.Read(b[64:])
	return b
}

// The dashboard says a daemon update is available, starts it, shows its progress and its result
// (here the hand-over is played by the test: the record says the new release is ready, as the
// next daemon would write it).
func TestDashboardUpdatesTheDaemon(t *testing.T) {
	key, err := testReleaseKey()
	if err != nil {
		t.Fatal(err)
	}
	repo := memReleases{}
	var ix *release.Index
	for _, s := range []string{"1.1.0", "1.2.0"} {
		v, _ := release.ParseVersion(s)
		files, _, err := release.Assemble(v, []release.Binary{{Program: release.Program, OS: "linux", Arch: "amd64", Data: amd64Program()}}, key, 0, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			repo[f.Path] = f.Content
		}
		ix = ix.With(v)
	}
	repo["channels.json"] = ix.Bytes()
	dir := t.TempDir()
	layout := release.Layout{Dir: filepath.Join(dir, "releases")}
	up := release.NewUpdater(release.UpdaterConfig{
		Layout: layout, Repo: release.Repo{Type: "space", ID: "robothub/releases"}, Key: key.Public(),
		Open:    func(context.Context) (release.Source, string, error) { return repo, "0123456789abcdef", nil },
		Running: "1.1.0", Self: filepath.Join(dir, "robot-daemon"), GOOS: "linux", GOARCH: "amd64",
		SmokeTest: func(context.Context, string, release.Version) error { return nil },
		Handover: func(rec *release.Record) error {
			go func() {
				time.Sleep(500 * time.Millisecond) // the progress shows meanwhile
				rec.Released = time.Now()
				_ = layout.WriteRecord(rec)
				_ = layout.Arrived(rec, "1.2.0", time.Now(), time.Now())
			}()
			return nil
		},
	})
	d := startServer(t, serverOptions{updater: up})
	ctx := browser(t)
	must := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		stepCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(stepCtx, actions...); err != nil {
			t.Fatalf("%s: %v (the banner says %q, the error %q)", what, err, textOf(ctx, "#daemon-update-text"), textOf(ctx, "#action-error"))
		}
	}
	must("the update offered", chromedp.Navigate(d.loginURL()),
		waitText("#daemon-update-text", "robot-daemon 1.2.0 is available (this robot runs 1.1.0)."))
	must("the update started and its progress shown", clickEnabled("#daemon-update-start"),
		waitText("#daemon-update-text", "Updating to robot-daemon 1.2.0: "))
	must("the result shown", waitText("#daemon-update-text", "Updated to robot-daemon 1.2.0."))
}
