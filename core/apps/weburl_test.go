package apps_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robothub/robothub/adapters/python"
)

func TestCustomAppURLIsKeptOnlyWhenHTTP(t *testing.T) {
	m := newManager(t, "", "dev")
	t.Cleanup(func() {
		if j, err := m.Remove("coop_app"); err == nil {
			waitJob(t, j)
		}
	})
	for _, c := range []struct{ url, want string }{
		{"javascript:alert(document.cookie)", ""},
		{"data:text/html,<script>alert(1)</script>", ""},
		{"file:///etc/passwd", ""},
		{"http://0.0.0.0:8042", "http://0.0.0.0:8042"},
		{"https://robot.local:8443/ui", "https://robot.local:8443/ui"},
	} {
		dir := filepath.Join(t.TempDir(), "coop_app")
		if err := python.CopyPackage(dir, appDir("coop_app")); err != nil {
			t.Fatal(err)
		}
		mainPy := filepath.Join(dir, "coop_app", "main.py")
		src, _ := os.ReadFile(mainPy)
		text := strings.Replace(string(src), "class CoopApp(RobotApp):\n", "class CoopApp(RobotApp):\n    custom_app_url = \""+c.url+"\"\n", 1)
		if text == string(src) {
			t.Fatal("coop_app's class line changed: update this test")
		}
		os.WriteFile(mainPy, []byte(text), 0o644)
		installOK(t, m, dir)
		app, err := m.App("coop_app")
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if app.Extra.CustomAppURL != nil {
			got = *app.Extra.CustomAppURL
		}
		if got != c.want {
			t.Errorf("custom_app_url %q: listed as %q, want %q", c.url, got, c.want)
		}
	}
}
