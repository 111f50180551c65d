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
	// Whole: user and password (net/url's Redacted keeps the user, which may be the token).
	for in, want := range map[string]string{
		"https://alice:hunter2@idx.example/simple": "https://xxxxx@idx.example/simple",
		"https://tok123@idx.example/simple":        "https://xxxxx@idx.example/simple",
		"https://alice:p@ss@idx.example/simple":    "https://xxxxx@idx.example/simple",
		"https://alice:@idx.example/simple?x=1":    "https://xxxxx@idx.example/simple?x=1",
		"https://idx.example/simple":               "https://idx.example/simple",
		"ssh://git:tok@host:22/u/app.git":          "ssh://xxxxx@host:22/u/app.git",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%s) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"fatal: unable to access 'https://alice:hunter2@h/x/': refused": "fatal: unable to access 'https://xxxxx@h/x/': refused",
		"from https://tok@h/simple and git+https://u:p@ss@h2/x.git":     "from https://xxxxx@h/simple and git+https://xxxxx@h2/x.git",
		"mail alice@example.com about https://h/x":                      "mail alice@example.com about https://h/x",
	} {
		if got := RedactText(in); got != want {
			t.Errorf("RedactText(%s) = %s, want %s", in, got, want)
		}
	}
	msg := installerMessage([]string{"Looking in indexes: https://alice:hunter2@idx/simple", "ERROR: Could not find a version that satisfies the requirement x (from https://alice:hunter2@idx/simple)", "ERROR: No matching distribution found for x"})
	if strings.Contains(msg, "hunter2") || !strings.Contains(msg, "No matching distribution found for x") {
		t.Errorf("installerMessage: %s", msg)
	}
	if got := requirementName(`dep-x.y>=1.1; python_version >= "3"`); got != "dep-x.y" {
		t.Errorf("requirementName: %q", got)
	}
}
