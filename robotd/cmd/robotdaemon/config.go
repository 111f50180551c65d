package robotdaemon

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/robothub/robothub/adapters/facedetect"
	"github.com/robothub/robothub/adapters/hardware"
	"github.com/robothub/robothub/adapters/hardware/media"
	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/release"
	"github.com/robothub/robothub/robotd"
	"github.com/robothub/robothub/robotd/access"
	"github.com/robothub/robothub/robotd/fleetagent"
	"github.com/urfave/cli/v2"
)

// configFrom resolves the flags of c over the variables getenv reads into the daemon's Config:
// every default the help names is filled in here, and every flag checked, so that a mistake is
// said with the flag's name before anything starts.
func configFrom(c *cli.Context, getenv func(string) string) (robotd.Config, error) {
	cfg := robotd.Config{
		Sim: robotd.Sim(*c.Generic("sim").(*simMode)), SerialPort: c.String("serialport"), HardwareConfig: c.String("hardware-config"),
		BusTimeout: c.Duration("bus-timeout"),
		Wireless:   c.Bool("wireless-version"), NoWakeUpOnStart: c.Bool("no-wake-up-on-start"),
		StartupApp: strings.TrimSpace(c.String("startup-app")), StopTimeout: c.Duration("stop-timeout"),
		Python: c.String("python"), WheelDirs: c.StringSlice("wheel-dir"), AllowedHosts: c.StringSlice("allowed-host"),
	}
	cfg.Offline, cfg.SystemSitePackages, cfg.NoMDNS = c.Bool("offline"), c.Bool("system-site-packages"), c.Bool("no-mdns")
	mib := c.Int("max-download-mib")
	if mib < 1 {
		return cfg, fmt.Errorf("--max-download-mib: must be at least 1, got %d", mib)
	}
	cfg.MaxDownloadBytes = int64(mib) << 20
	for _, d := range c.StringSlice("preload-moves") {
		if d = strings.TrimSpace(d); d != "" && d != "none" {
			if err := robotd.CheckDatasetID(d); err != nil {
				return cfg, fmt.Errorf("--preload-moves: %w", err)
			}
			cfg.PreloadMoves = append(cfg.PreloadMoves, d)
		}
	}
	var err error
	if cfg.Media, err = mediaConfigFrom(c, cfg.Sim, cfg.HardwareConfig); err != nil {
		return cfg, err
	}
	if cfg.Face, err = faceConfigFrom(c); err != nil {
		return cfg, err
	}
	cfg.IndexURL, cfg.ExtraIndexURLs = strings.TrimSpace(c.String("index-url")), c.StringSlice("extra-index-url")
	switch c.String("installer") {
	case "pip":
	case "auto", "uv":
		if uv, err := exec.LookPath("uv"); err == nil {
			cfg.UV = uv
		} else if c.String("installer") == "uv" {
			return cfg, errors.New("--installer uv: uv is not on PATH")
		}
	default:
		return cfg, fmt.Errorf("--installer: %q is not one of auto, pip, uv", c.String("installer"))
	}
	if err := cfg.LogLevel.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		return cfg, fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", c.String("log-level"))
	}
	if cfg.BusTimeout < 0 || cfg.BusTimeout > time.Second {
		return cfg, fmt.Errorf("--bus-timeout: want a duration from 0 to 1s, got %s", cfg.BusTimeout)
	}
	if cfg.StopTimeout <= 0 {
		return cfg, fmt.Errorf("--stop-timeout: must be positive, got %s", cfg.StopTimeout)
	}
	if cfg.StartupApp != "" && !apps.AppNamePattern().MatchString(cfg.StartupApp) {
		return cfg, fmt.Errorf("--startup-app: %q is not an app name (letters, digits and underscores)", cfg.StartupApp)
	}
	host := c.String("host")
	if host == "" {
		host = "127.0.0.1"
		if cfg.Wireless {
			host = "0.0.0.0"
		}
	}
	port := c.Int("port")
	if port < 0 || port > 65535 {
		return cfg, fmt.Errorf("--port: %d is not a port number", port)
	}
	cfg.Addr = net.JoinHostPort(host, strconv.Itoa(port))
	if cfg.AppWebPort = c.Int("app-web-port"); cfg.AppWebPort < 0 || cfg.AppWebPort > 65535 {
		return cfg, fmt.Errorf("--app-web-port: %d is not a port number", cfg.AppWebPort)
	}
	if cfg.BodyTimeout = c.Duration("body-timeout"); cfg.BodyTimeout <= 0 {
		return cfg, fmt.Errorf("--body-timeout: must be positive, got %s", cfg.BodyTimeout)
	}
	cfg.NoAuth = c.Bool("no-auth")
	if err := robotd.CheckNoAuth(cfg.NoAuth, host); err != nil {
		return cfg, err
	}

	cfg.DataDir = c.String("data-dir")
	if cfg.DataDir == "" {
		switch {
		case cfg.Wireless:
			cfg.DataDir = "/var/lib/robot-daemon"
		case getenv("XDG_STATE_HOME") != "":
			cfg.DataDir = filepath.Join(getenv("XDG_STATE_HOME"), "robot-daemon")
		case getenv("HOME") != "":
			cfg.DataDir = filepath.Join(getenv("HOME"), ".local", "state", "robot-daemon")
		default:
			return cfg, errors.New("--data-dir: no default without $HOME; pass --data-dir")
		}
	}
	cfg.AppsVenv = c.String("apps-venv")
	if cfg.AppsVenv == "" {
		cfg.AppsVenv = robotd.DefaultAppsVenv(cfg.DataDir, cfg.Wireless)
	}
	cfg.Token = strings.TrimSpace(c.String("token"))
	source := "--token"
	if cfg.Token == "" {
		cfg.Token, source = strings.TrimSpace(getenv("ROBOT_DAEMON_TOKEN")), "ROBOT_DAEMON_TOKEN"
	}
	if cfg.NoAuth {
		cfg.Token = "" // nothing to send: apps are not given one
	}
	if cfg.Token != "" {
		if err := access.CheckTokenStrength(cfg.Token, source); err != nil {
			return cfg, err
		}
	}
	cfg.HubURL = c.String("hub-url")
	if cfg.HubURL == "" {
		cfg.HubURL = getenv("HF_ENDPOINT")
	}
	if cfg.HubURL == "" {
		cfg.HubURL = "https://huggingface.co"
	}
	if cfg.HubURL == "none" {
		cfg.HubURL = ""
	}
	// The hub token reads private spaces (install-private-space); HF_TOKEN or the hub's token file.
	if hc, err := hub.ConfigFromEnv(getenv, cfg.HubURL, ""); err == nil {
		cfg.HubToken = hc.Token
	}
	fleetSettings := fleetagent.Settings{URL: c.String("fleet"), ID: c.String("fleet-id"), Name: c.String("fleet-name"),
		Username: c.String("fleet-username"), PasswordFile: c.String("fleet-password-file"),
		CA: c.String("fleet-ca"), Cert: c.String("fleet-cert"), Key: c.String("fleet-key")}
	if cfg.Fleet, err = fleetagent.Resolve(fleetSettings, getenv); err != nil {
		return cfg, err
	}
	if cfg.Release, err = releaseConfigFrom(c, getenv); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// simMode is --sim's value (a Sim).
type simMode robotd.Sim

func (m *simMode) String() string { return string(*m) }

// IsBoolFlag lets --sim stand alone, as the flag package does for booleans.
func (m *simMode) IsBoolFlag() bool { return true }

func (m *simMode) Set(s string) error {
	switch s {
	case "true", "sim":
		*m = simMode(robotd.SimRobot)
	case "false", "":
		*m = simMode(robotd.SimNone)
	case "bus":
		*m = simMode(robotd.SimBus)
	default:
		return fmt.Errorf("%q is not one of --sim (the simulated robot) or --sim=bus (the motor bus emulator)", s)
	}
	return nil
}

// mediaFlags are the daemon's media options.
var mediaFlags = []cli.Flag{
	&cli.BoolFlag{Name: "no-media", Usage: "open no camera, microphone or speaker (apps may open them themselves)"},
	&cli.StringFlag{Name: "camera", Usage: "the camera: /dev/videoN, libcamera, test (GStreamer's test source), gst:DESCRIPTION or none (default: the robot's, found by USB id; the drawn one on --sim)"},
	&cli.StringFlag{Name: "microphone", Usage: "the microphones: an ALSA device (hw:CARD=NAME), pulse, pulse:NAME, test, gst:DESCRIPTION or none (default: the robot's sound card, found by USB id; on --sim it hears the speaker)"},
	&cli.StringFlag{Name: "speaker", Usage: "the speaker: an ALSA device, pulse, pulse:NAME, test (a clocked fakesink), file:PATH (a WAV), gst:DESCRIPTION or none (default: the robot's sound card; on --sim it plays into the microphone)"},
	&cli.StringFlag{Name: "camera-mode", Value: media.DefaultVideoMode.String(), Usage: "the size and rate apps get frames at, WIDTHxHEIGHT@FPS"},
}

// mediaConfigFrom resolves the media flags over the media section of the hardware config at
// hwConfig (if any): a flag given wins over the config, the config over the defaults.
func mediaConfigFrom(c *cli.Context, sim robotd.Sim, hwConfig string) (robotd.MediaConfig, error) {
	var fc media.Config
	if hwConfig != "" {
		data, err := hardware.ReadConfigFile(hwConfig)
		if err != nil {
			return robotd.MediaConfig{}, err
		}
		if fc, err = media.ParseConfig(data); err != nil {
			return robotd.MediaConfig{}, fmt.Errorf("--hardware-config %s: %w", hwConfig, err)
		}
	}
	flagOr := func(name, config string) string {
		if c.IsSet(name) {
			return c.String(name)
		}
		return config
	}
	mc := robotd.MediaConfig{Camera: flagOr("camera", fc.Camera), Microphone: flagOr("microphone", fc.Microphone),
		Speaker: flagOr("speaker", fc.Speaker), CameraIDs: fc.CameraIDs, AudioIDs: fc.AudioIDs}
	var err error
	if mc.Mode, err = media.ParseVideoMode(c.String("camera-mode")); err != nil {
		return mc, fmt.Errorf("--camera-mode: %w", err)
	}
	if !c.IsSet("camera-mode") && fc.CameraMode.Width > 0 {
		mc.Mode = fc.CameraMode
	}
	if c.Bool("no-media") {
		for _, name := range []string{"camera", "microphone", "speaker"} {
			if v := c.String(name); c.IsSet(name) && v != media.DeviceNone {
				return mc, fmt.Errorf("--no-media and --%s %s: choose one", name, v)
			}
		}
		mc.Camera, mc.Microphone, mc.Speaker = media.DeviceNone, media.DeviceNone, media.DeviceNone
		return mc, nil
	}
	// The simulated robot's own camera and sound are Config's defaults (Config.resolved).
	return mc, robotd.CheckCamera(sim, mc.Camera)
}

// faceFlags are the face detector's options.
var faceFlags = []cli.Flag{
	&cli.StringFlag{Name: "onnxruntime", Usage: "ONNX Runtime's shared library for head tracking's face detector (default $" + facedetect.LibraryEnv + ", else libonnxruntime in the usual library folders)"},
	&cli.StringFlag{Name: "face-model-repo", Value: facedetect.DefaultModelRepo, Usage: "the model repo on the hub head tracking's face model comes from (YuNet or BlazeFace, ONNX)"},
	&cli.StringFlag{Name: "face-model-file", Value: facedetect.DefaultModelFile, Usage: "the face model's file in --face-model-repo"},
}

// faceConfigFrom checks the face flags: the model comes from a repo of the hub, by a path inside it.
func faceConfigFrom(c *cli.Context) (robotd.FaceConfig, error) {
	fc := robotd.FaceConfig{Runtime: c.String("onnxruntime"), Repo: strings.TrimSpace(c.String("face-model-repo")), File: strings.TrimSpace(c.String("face-model-file"))}
	if err := robotd.CheckDatasetID(fc.Repo); err != nil {
		return fc, fmt.Errorf("--face-model-repo: %q is not a model repo ID (owner/name)", fc.Repo)
	}
	if fc.File == "" || strings.Contains(fc.File, "..") || strings.HasPrefix(fc.File, "/") {
		return fc, fmt.Errorf("--face-model-file: %q is not a file of a repo", fc.File)
	}
	return fc, nil
}

// releaseFlags are where the daemon's own releases come from (robotd.ReleaseConfig).
func releaseFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "release-repo", Usage: "the hub repository of the daemon's own releases: owner/name (a model) or models/, datasets/, spaces/owner/name; \"none\": no self-update (default $ROBOT_DAEMON_RELEASE_REPO, else " + robotd.DefaultReleaseRepo + ")"},
		&cli.StringFlag{Name: "release-channel", Usage: "stable or pre-release (default $ROBOT_DAEMON_RELEASE_CHANNEL, else stable)"},
		&cli.StringFlag{Name: "release-key", Usage: "a minisign public key `FILE` that releases must be signed with, instead of the compiled-in key"},
		&cli.DurationFlag{Name: "update-probation", Value: release.DefaultProbation, Usage: "how long a new release must run after it is ready before a crash no longer counts against it"},
	}
}

// releaseConfigFrom resolves the release flags over their variables; the key is read here, so a
// bad --release-key stops the daemon at start.
func releaseConfigFrom(c *cli.Context, getenv func(string) string) (robotd.ReleaseConfig, error) {
	rc := robotd.ReleaseConfig{Channel: cmp.Or(c.String("release-channel"), getenv("ROBOT_DAEMON_RELEASE_CHANNEL"), release.Stable), Probation: c.Duration("update-probation")}
	if err := release.CheckChannel(rc.Channel); err != nil {
		return rc, fmt.Errorf("--release-channel: %w", err)
	}
	if rc.Probation <= 0 {
		return rc, fmt.Errorf("--update-probation: must be positive, got %s", rc.Probation)
	}
	if repo := cmp.Or(c.String("release-repo"), getenv("ROBOT_DAEMON_RELEASE_REPO"), robotd.DefaultReleaseRepo); repo != "none" {
		r, err := release.ParseRepo(repo)
		if err != nil {
			return rc, fmt.Errorf("--release-repo: %w", err)
		}
		rc.Repo = &r
	}
	key, err := release.DefaultKey()
	if file := c.String("release-key"); file != "" {
		if key, err = release.LoadKey(file); err != nil {
			return rc, fmt.Errorf("--release-key: %w", err)
		}
	} else if err != nil {
		return rc, err
	}
	rc.Key = &key
	return rc, nil
}

// fleetFlags are the daemon's fleet settings (fleetagent.Settings), as flags and (for the systemd
// unit's /etc/robot-daemon/env) variables.
func fleetFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "fleet", Usage: "join a fleet through the MQTT broker at `URL` (mqtt://, mqtts://, ws://, wss://; $ROBOT_FLEET_URL): a push to an installed app's space updates it"},
		&cli.StringFlag{Name: "fleet-id", Usage: "the robot's id in the fleet: its MQTT client id and status topic (default $ROBOT_FLEET_ID, else robot-<hardware id>: a hash of /etc/machine-id or the board's serial number, unique per robot)"},
		&cli.StringFlag{Name: "fleet-name", Usage: "a human name for fleet ls (default the host name)"},
		&cli.StringFlag{Name: "fleet-username", Usage: "the broker user name (default $ROBOT_FLEET_USERNAME, else the id); the password is $ROBOT_FLEET_PASSWORD or --fleet-password-file"},
		&cli.StringFlag{Name: "fleet-password-file", Usage: "a file holding the broker password ($ROBOT_FLEET_PASSWORD_FILE)"},
		&cli.StringFlag{Name: "fleet-ca", Usage: "PEM file of the CAs the broker's certificate is checked against (default the system's; $ROBOT_FLEET_CA)"},
		&cli.StringFlag{Name: "fleet-cert", Usage: "PEM client certificate, AWS IoT Core's way ($ROBOT_FLEET_CERT); --fleet-key is its key ($ROBOT_FLEET_KEY)"},
		&cli.StringFlag{Name: "fleet-key", Usage: "the client certificate's key"},
	}
}
