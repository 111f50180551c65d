package robotdaemon

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/release"
	"github.com/robothub/robothub/robotd"
)

// parse runs robot-daemon's command line as Run does, up to the Config it would serve.
func parse(t *testing.T, env map[string]string, args ...string) (cfg robotd.Config, served bool, stdout string, err error) {
	t.Helper()
	var out strings.Builder
	getenv := func(k string) string { return env[k] }
	err = run(context.Background(), append([]string{"robot-daemon"}, args...), getenv, &out, &out, func(c robotd.Config) error {
		cfg, served = c, true
		return nil
	})
	return cfg, served, out.String(), err
}

// The defaults the help names are the Config's: what robot-daemon with no flags serves.
func TestFlagsResolveToTheDefaultsTheHelpNames(t *testing.T) {
	home := t.TempDir()
	cfg, served, _, err := parse(t, map[string]string{"HOME": home}, "--sim")
	if err != nil || !served {
		t.Fatalf("robot-daemon --sim: served %v, %v", served, err)
	}
	data := filepath.Join(home, ".local", "state", "robot-daemon")
	key, err := release.DefaultKey()
	if err != nil {
		t.Fatal(err)
	}
	repo, err := release.ParseRepo(robotd.DefaultReleaseRepo)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"Sim", cfg.Sim, robotd.SimRobot},
		{"Addr", cfg.Addr, "127.0.0.1:8000"},
		{"DataDir", cfg.DataDir, data},
		{"AppsVenv", cfg.AppsVenv, filepath.Join(data, "apps_venv")},
		{"HubURL", cfg.HubURL, hub.DefaultEndpoint},
		{"PreloadMoves", strings.Join(cfg.PreloadMoves, ","), strings.Join(robotd.DefaultMoveLibraries, ",")},
		{"MaxDownloadBytes", cfg.MaxDownloadBytes, int64(hub.DefaultMaxSnapshotBytes)},
		{"LogLevel", cfg.LogLevel, slog.LevelInfo},
		{"Python", cfg.Python, "python3"},
		{"NoWakeUpOnStart", cfg.NoWakeUpOnStart, false},
		{"Release.Repo", cfg.Release.Repo.String(), repo.String()},
		{"Release.Channel", cfg.Release.Channel, release.Stable},
		{"Release.Key", cfg.Release.Key != nil && cfg.Release.Key.String() == key.String(), true},
		{"Fleet", cfg.Fleet.Enabled(), false},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}

	cfg, _, _, err = parse(t, map[string]string{"HOME": home, "XDG_STATE_HOME": "/state", "HF_ENDPOINT": "http://127.0.0.1:9", "ROBOT_DAEMON_TOKEN": "0123456789abcdef0123456789abcdef"})
	if err != nil || cfg.DataDir != "/state/robot-daemon" || cfg.HubURL != "http://127.0.0.1:9" || cfg.Token != "0123456789abcdef0123456789abcdef" {
		t.Errorf("with XDG_STATE_HOME, HF_ENDPOINT and ROBOT_DAEMON_TOKEN: DataDir %q, HubURL %q, token set %v, %v", cfg.DataDir, cfg.HubURL, cfg.Token != "", err)
	}
	cfg, _, _, err = parse(t, nil, "--wireless-version", "--hub-url", "none", "--preload-moves", "none", "--no-wake-up-on-start", "--port", "0")
	if err != nil || cfg.Addr != "0.0.0.0:0" || cfg.DataDir != "/var/lib/robot-daemon" || cfg.AppsVenv != robotd.WirelessAppsVenv ||
		cfg.HubURL != "" || cfg.PreloadMoves != nil || !cfg.NoWakeUpOnStart {
		t.Errorf("--wireless-version --hub-url none --preload-moves none: %+v, %v", cfg, err)
	}
	cfg, _, _, err = parse(t, map[string]string{"HOME": home, "ROBOT_DAEMON_TOKEN": "0123456789abcdef0123456789abcdef"}, "--no-auth", "--host", "localhost")
	if err != nil || !cfg.NoAuth || cfg.Token != "" {
		t.Errorf("--no-auth: NoAuth %v, token kept %v, %v", cfg.NoAuth, cfg.Token != "", err)
	}
}

// Each bad flag is refused before anything is served, naming the flag and what is wrong with it.
func TestBadFlagsAreRefusedByName(t *testing.T) {
	env := map[string]string{"HOME": t.TempDir()}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sim=maybe"}, `"maybe" is not one of --sim (the simulated robot) or --sim=bus`},
		{[]string{"--port", "70000"}, "--port: 70000 is not a port number"},
		{[]string{"--port", "-1"}, "--port: -1 is not a port number"},
		{[]string{"--app-web-port", "65536"}, "--app-web-port: 65536 is not a port number"},
		{[]string{"--log-level", "loud"}, `--log-level: "loud" is not one of debug, info, warn, error`},
		{[]string{"--bus-timeout", "2s"}, "--bus-timeout: want a duration from 0 to 1s, got 2s"},
		{[]string{"--stop-timeout", "0s"}, "--stop-timeout: must be positive, got 0s"},
		{[]string{"--body-timeout", "-1s"}, "--body-timeout: must be positive, got -1s"},
		{[]string{"--startup-app", "my-app"}, `--startup-app: "my-app" is not an app name`},
		{[]string{"--max-download-mib", "0"}, "--max-download-mib: must be at least 1, got 0"},
		{[]string{"--preload-moves", "a/b/c"}, `--preload-moves: dataset "a/b/c" is not a dataset ID`},
		{[]string{"--installer", "conda"}, `--installer: "conda" is not one of auto, pip, uv`},
		{[]string{"--face-model-repo", "a/b/c"}, `--face-model-repo: "a/b/c" is not a model repo ID`},
		{[]string{"--face-model-file", "../model.onnx"}, `--face-model-file: "../model.onnx" is not a file of a repo`},
		{[]string{"--release-channel", "nightly"}, "--release-channel:"},
		{[]string{"--update-probation", "0s"}, "--update-probation: must be positive, got 0s"},
		{[]string{"--release-repo", "a/b/c/d"}, "--release-repo:"},
		{[]string{"--camera", "sim"}, "--camera sim: only the simulated robot (--sim) has a drawn camera"},
		{[]string{"--sim", "--no-media", "--camera", "test"}, "--no-media and --camera test: choose one"},
		{[]string{"--sim", "--camera-mode", "big"}, "--camera-mode:"},
		{[]string{"--sim", "--hardware-config", "/nonexistent/robot.yaml"}, "/nonexistent/robot.yaml"},
		{[]string{"--sim", "--no-auth", "--host", "0.0.0.0"}, "--no-auth: refusing to listen on 0.0.0.0 without authentication"},
		{[]string{"--sim", "--token", "s3cr3t-letmein"}, "--token: the API token is too weak"},
		{[]string{"--sim", "--fleet", "http://broker"}, "--fleet:"},
		{[]string{"--sim", "--fleet", "mqtt://127.0.0.1:1883", "--fleet-id", "a/b"}, "--fleet-id:"},
	} {
		_, served, _, err := parse(t, env, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || served {
			t.Errorf("robot-daemon %s: served %v, %v; want a refusal with %q", strings.Join(c.args, " "), served, err, c.want)
		}
		if strings.Contains(c.want, "token") && strings.Contains(err.Error(), "s3cr3t-letmein") {
			t.Errorf("the refusal of a weak token shows it: %v", err)
		}
	}
	if _, served, _, err := parse(t, nil, "--sim"); err == nil || err.Error() != "--data-dir: no default without $HOME; pass --data-dir" || served {
		t.Errorf("without HOME or --data-dir: served %v, %v", served, err)
	}
}

// --help and --version answer and serve nothing; an unknown flag is an error naming it.
func TestHelpAndVersionServeNothing(t *testing.T) {
	_, served, out, err := parse(t, nil, "--help")
	if err != nil || served {
		t.Fatalf("--help: served %v, %v", served, err)
	}
	for _, flag := range []string{"--sim", "--serialport", "--data-dir", "--token value, --api-token value", "--no-auth", "--fleet URL",
		"--release-repo", "--camera", "--onnxruntime", "--allowed-host", "1a86:55d3", "/dev/ttyAMA3", robotd.WirelessAppsVenv} {
		if !strings.Contains(out, flag) {
			t.Errorf("--help does not name %q:\n%s", flag, out)
		}
	}
	if _, served, out, err := parse(t, nil, "--version"); err != nil || served || !strings.HasPrefix(out, "robot-daemon version ") {
		t.Errorf("--version: served %v, %q, %v", served, out, err)
	}
	if _, served, _, err := parse(t, nil, "--simulate"); err == nil || !strings.Contains(err.Error(), "flag provided but not defined: -simulate") || served {
		t.Errorf("--simulate: served %v, %v", served, err)
	}
}

// What the serving returns is what Run returns: a daemon that fails to start says why.
func TestRunReturnsTheServeError(t *testing.T) {
	want := errors.New("the port is taken")
	err := run(context.Background(), []string{"robot-daemon", "--sim", "--data-dir", t.TempDir()}, func(string) string { return "" },
		&strings.Builder{}, &strings.Builder{}, func(robotd.Config) error { return want })
	if !errors.Is(err, want) {
		t.Fatalf("run = %v, want %v", err, want)
	}
	// And a Config the command did not make is checked by robotd itself, naming the field.
	err = robotd.Serve(context.Background(), robotd.Config{Sim: robotd.SimRobot}, nil, &strings.Builder{}, &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), "Config.DataDir") {
		t.Fatalf("robotd.Serve without a data dir: %v", err)
	}
	err = robotd.Serve(context.Background(), robotd.Config{Sim: "maybe", DataDir: t.TempDir()}, nil, &strings.Builder{}, &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), "Config.Sim") {
		t.Fatalf("robotd.Serve with Sim %q: %v", "maybe", err)
	}
}
