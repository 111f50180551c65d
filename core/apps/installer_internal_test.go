package apps

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallCommand checks the commands the daemon runs for each package source: pip by default
// (leaving the index to pip's configuration), --index-url, offline, and uv with pip's configured
// index handed over, since uv does not read pip's.
func TestInstallCommand(t *testing.T) {
	venv := &Venv{Dir: "/venv"}
	py := filepath.Join("/venv", "bin", "python")
	pip := py + " -m pip --disable-pip-version-check --no-input install"
	cases := []struct {
		name string
		src  PackageSource
		opts installOptions
		want string
	}{
		{"pip config", PackageSource{WheelDirs: []string{"/w"}}, installOptions{}, pip + " --find-links /w dep>=1.1"},
		{"index url", PackageSource{IndexURL: "https://u:secret@idx/simple", ExtraIndexURLs: []string{"https://x/simple"}}, installOptions{},
			pip + " --index-url https://u:secret@idx/simple --extra-index-url https://x/simple dep>=1.1"},
		{"offline", PackageSource{Offline: true, IndexURL: "https://idx/simple", WheelDirs: []string{"/w"}}, installOptions{},
			pip + " --no-index --find-links /w dep>=1.1"},
		{"update", PackageSource{}, installOptions{upgradePackages: []string{"dep"}}, pip + " --upgrade dep>=1.1"},
		{"app wheel", PackageSource{IndexURL: "https://idx/simple"}, installOptions{noDeps: true, reinstall: true, noIndex: true},
			pip + " --no-index --no-deps --force-reinstall dep>=1.1"},
		{"uv", PackageSource{UV: "/usr/bin/uv", IndexURL: "https://idx/simple"}, installOptions{upgradePackages: []string{"dep"}},
			"/usr/bin/uv pip install --python " + py + " --index-url https://idx/simple --upgrade-package dep dep>=1.1"},
		{"uv sdk", PackageSource{UV: "/usr/bin/uv", Offline: true}, installOptions{noDeps: true, reinstall: true, noBuildIsolation: true},
			"/usr/bin/uv pip install --python " + py + " --no-index --no-deps --reinstall --no-build-isolation dep>=1.1"},
	}
	for _, c := range cases {
		venv.Source = c.src
		name, args := venv.installCommand(context.Background(), c.opts, "dep>=1.1")
		if got := name + " " + strings.Join(args, " "); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

func TestRedaction(t *testing.T) {
	if got := RedactURL("https://alice:hunter2@idx.example/simple"); strings.Contains(got, "hunter2") || !strings.Contains(got, "alice") {
		t.Errorf("RedactURL: %s", got)
	}
	if got := RedactURL("https://tok123@idx.example/simple"); strings.Contains(got, "tok123") {
		t.Errorf("RedactURL of a token user: %s", got)
	}
	msg := installerMessage([]string{"Looking in indexes: https://alice:hunter2@idx/simple", "ERROR: Could not find a version that satisfies the requirement x (from https://alice:hunter2@idx/simple)", "ERROR: No matching distribution found for x"})
	if strings.Contains(msg, "hunter2") || !strings.Contains(msg, "No matching distribution found for x") {
		t.Errorf("installerMessage: %s", msg)
	}
	if got := requirementName(`dep-x.y>=1.1; python_version >= "3"`); got != "dep-x.y" {
		t.Errorf("requirementName: %q", got)
	}
}
