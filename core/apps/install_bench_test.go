package apps_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/robothub/robothub/adapters/python"
	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/internal/testkit/pyindex"
)

// BenchmarkInstallAppWithOneDependency measures an install job of an app (a local folder) that
// requires one package, resolved and downloaded from a PEP 503 index on loopback: the wheel build,
// the resolution, the download and both installs. Each iteration starts with neither installed.
// The uv case runs only where uv is on PATH.
func BenchmarkInstallAppWithOneDependency(b *testing.B) {
	idx := pyindex.New()
	defer idx.Close()
	idx.Publish("dep", "1.1")
	for _, installer := range []string{"pip", "uv"} {
		b.Run(installer, func(b *testing.B) {
			src := python.Source{IndexURL: idx.URL()}
			if installer == "uv" {
				var err error
				if src.UV, err = exec.LookPath("uv"); err != nil {
					b.Skip("uv is not on PATH: not measured here")
				}
			}
			venv := filepath.Join(b.TempDir(), "venv")
			m := indexManager(b, &python.Venv{Dir: venv, Source: src}, apps.Config{})
			app := writeDepApp(b, "1.0.0", "dep>=1.1")
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				if out, err := exec.Command(filepath.Join(venv, "bin", "python"), "-m", "pip", "uninstall", "-y", "-q", "dep", "dep-app").CombinedOutput(); err != nil {
					b.Fatalf("uninstall: %v\n%s", err, out)
				}
				b.StartTimer()
				j, err := m.Install(app)
				if err != nil {
					b.Fatal(err)
				}
				if err := j.Wait(); err != nil {
					b.Fatalf("install: %v", err)
				}
			}
		})
	}
}
