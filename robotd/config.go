package robotd

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/robothub/robothub/adapters/facedetect"
	"github.com/robothub/robothub/adapters/hardware/media"
	"github.com/robothub/robothub/adapters/hardware/usbdev"
	"github.com/robothub/robothub/core/release"
	"github.com/robothub/robothub/robotd/access"
	"github.com/robothub/robothub/robotd/fleetagent"
)

// Config is what a daemon serves with. robotd/cmd/robotdaemon makes one from robot-daemon's flags
// and variables (and says each default in its help); a program that embeds the daemon may build one.
// A zero field means what its comment says: the robot-daemon command's default, or nothing. Serve
// refuses a Config whose fields contradict each other or are out of range, naming the field.
type Config struct {
	// Sim picks the robot's backend: SimNone (the zero value) drives the motors on the serial bus.
	Sim Sim
	// SerialPort is the motor bus's serial port; "": the Lite's USB adapter (LiteAdapter), found by
	// its USB id, or WirelessUART when Wireless.
	SerialPort string
	// HardwareConfig is a hardware config YAML file (motor ids, offsets, limits); "": the built-in one.
	HardwareConfig string
	// BusTimeout is the slack a motor's answer gets on top of its wire time, at most 1s; 0: 5ms
	// (15ms on SimBus).
	BusTimeout time.Duration
	// Wireless runs as on the Wireless robot: Addr defaults to 0.0.0.0:8000, AppsVenv to
	// WirelessAppsVenv, and the serial port to WirelessUART.
	Wireless bool
	// NoWakeUpOnStart keeps the robot asleep at start; the zero value wakes it up.
	NoWakeUpOnStart bool
	// StartupApp is the app started after the robot wakes up (installed from the catalog when
	// missing); "": none.
	StartupApp string

	// Addr is the TCP address the API listens on, host:port (port 0: any free one); "":
	// 127.0.0.1:8000, or 0.0.0.0:8000 when Wireless.
	Addr string
	// AppWebPort is the port of the running app's web page when its custom_app_url names the
	// SDK's default; 0: the daemon's port + 42 (- 42 where that is no port).
	AppWebPort int
	// Token is the owner's API token, which clients send over TCP; "": the one in
	// <DataDir>/access.TokenFileName, made on first start. Ignored with NoAuth.
	Token string
	// NoAuth lets every client use the API without the token; refused unless Addr is loopback.
	NoAuth bool
	// BodyTimeout is how long a client has to send a request's body; 0: httpapi.DefaultBodyTimeout.
	BodyTimeout time.Duration
	// AllowedHosts are host names the API answers to besides IP addresses, localhost and this
	// machine's name (which are always allowed).
	AllowedHosts []string
	// NoMDNS keeps the daemon from announcing itself on the local network (mDNS), which it does
	// when it listens beyond loopback.
	NoMDNS bool
	// LogLevel is the level of the log written to stderr; the zero value is slog.LevelInfo.
	LogLevel slog.Level

	// DataDir holds the installed-app records, the startup config, the token and the owner's
	// socket. Required: Serve has no default for it (the command's is under $XDG_STATE_HOME).
	DataDir string
	// AppsVenv is the apps venv; "": <DataDir>/apps_venv, or WirelessAppsVenv when Wireless.
	AppsVenv string
	// StopTimeout is how long a stopping app gets after SIGINT before SIGKILL; 0:
	// apps.DefaultStopTimeout.
	StopTimeout time.Duration
	// Python is the interpreter that creates the apps venv; "": python3.
	Python string
	// WheelDirs are wheels for pip --find-links, the only source when Offline; none:
	// /usr/share/python-wheels.
	WheelDirs []string
	// IndexURL is the package index app dependencies come from; "": pip's own configuration.
	IndexURL string
	// ExtraIndexURLs are other package indexes, searched as well.
	ExtraIndexURLs []string
	// Offline installs apps and their dependencies from WheelDirs only, never from an index.
	Offline bool
	// UV is the path of uv, which installs instead of pip; "": pip.
	UV string
	// SystemSitePackages lets apps use the system's Python packages.
	SystemSitePackages bool

	// HubURL is the hub whose robot_python_app spaces form the app catalog and whose datasets are
	// the move libraries; "": no hub (no catalog; move libraries from the cache only).
	HubURL string
	// HubToken reads the hub's private spaces (HF_TOKEN); "": anonymous.
	HubToken string
	// PreloadMoves are move libraries (dataset IDs on the hub) downloaded at start, in the
	// background; none: none (the command's default is DefaultMoveLibraries).
	PreloadMoves []string
	// MaxDownloadBytes is the most one download from the hub may hold; 0:
	// hub.DefaultMaxSnapshotBytes.
	MaxDownloadBytes int64

	// Fleet is the fleet the daemon joins (fleetagent.Resolve makes one); the zero value joins none.
	Fleet fleetagent.Config
	// Release is where the daemon's own releases come from; the zero value updates from nowhere.
	Release ReleaseConfig
	// Media names the camera, microphone and speaker.
	Media MediaConfig
	// Face is head tracking's face detector.
	Face FaceConfig
}

// Sim is a robot backend: the hardware, the simulation, or the hardware backend on an emulated bus.
type Sim string

const (
	SimNone  Sim = ""    // the robot's motors, on its serial bus
	SimRobot Sim = "sim" // the simulated robot (robot-daemon --sim)
	SimBus   Sim = "bus" // the hardware backend over a motor-bus emulator on a pty (--sim=bus)
)

// ReleaseConfig is where the daemon's own releases come from and how they are trusted.
type ReleaseConfig struct {
	Repo      *release.Repo // the hub repository of the releases; nil: no self-update
	Channel   string        // release.Stable or release.PreRelease; "": stable
	Key       *release.Key  // the key releases must be signed with; nil: the compiled-in key
	Probation time.Duration // how long a new release must run once ready; 0: release.DefaultProbation
}

// MediaConfig names the media devices: each "" is the robot's own (found by USB id), or on a
// simulated robot its drawn camera and a speaker that plays into the microphone; media.DeviceNone
// opens none.
type MediaConfig struct {
	Camera, Microphone, Speaker string
	Mode                        media.VideoMode // the size and rate apps get frames at; zero: media.DefaultVideoMode
	CameraIDs, AudioIDs         []usbdev.ID     // the USB ids the robot's camera and sound card are found by; none: the built-in ones
}

// FaceConfig is where head tracking's face detector comes from.
type FaceConfig struct {
	Runtime string // ONNX Runtime's shared library; "": $ORT_DYLIB_PATH, else the usual library folders
	Repo    string // the model repo on the hub; "": facedetect.DefaultModelRepo
	File    string // the model's file in Repo; "": facedetect.DefaultModelFile
}

// WirelessAppsVenv is where the Wireless robot keeps the shared apps venv.
const WirelessAppsVenv = "/venvs/apps_venv"

// resolved is cfg with its zero fields given their defaults, or an error naming the first field
// that is out of range or contradicts another.
func (cfg Config) resolved() (Config, error) {
	switch cfg.Sim {
	case SimNone, SimRobot, SimBus:
	default:
		return cfg, fmt.Errorf("Config.Sim: %q is not one of %q, %q, %q", cfg.Sim, SimNone, SimRobot, SimBus)
	}
	if cfg.DataDir == "" {
		return cfg, errors.New("Config.DataDir: the daemon needs a data dir")
	}
	if cfg.BusTimeout < 0 || cfg.BusTimeout > time.Second {
		return cfg, fmt.Errorf("Config.BusTimeout: want a duration from 0 to 1s, got %s", cfg.BusTimeout)
	}
	if cfg.StopTimeout < 0 || cfg.BodyTimeout < 0 || cfg.Release.Probation < 0 || cfg.MaxDownloadBytes < 0 {
		return cfg, errors.New("Config: StopTimeout, BodyTimeout, Release.Probation and MaxDownloadBytes must not be negative")
	}
	if cfg.AppWebPort < 0 || cfg.AppWebPort > 65535 {
		return cfg, fmt.Errorf("Config.AppWebPort: %d is not a port number", cfg.AppWebPort)
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:8000"
		if cfg.Wireless {
			cfg.Addr = "0.0.0.0:8000"
		}
	}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return cfg, fmt.Errorf("Config.Addr: %w", err)
	}
	if err := CheckNoAuth(cfg.NoAuth, host); err != nil {
		return cfg, err
	}
	if cfg.NoAuth {
		cfg.Token = "" // nothing to send: apps are not given one
	}
	if cfg.Token != "" {
		if err := access.CheckTokenStrength(cfg.Token, "Config.Token"); err != nil {
			return cfg, err
		}
	}
	if cfg.AppsVenv == "" {
		cfg.AppsVenv = DefaultAppsVenv(cfg.DataDir, cfg.Wireless)
	}
	if cfg.Python == "" {
		cfg.Python = "python3"
	}
	if len(cfg.WheelDirs) == 0 {
		cfg.WheelDirs = []string{"/usr/share/python-wheels"}
	}
	// This machine's own name is always allowed; host names compare without case or a final dot.
	hosts := make([]string, 0, len(cfg.AllowedHosts)+2)
	hosts = append(hosts, cfg.AllowedHosts...)
	if name, err := os.Hostname(); err == nil && name != "" {
		name = strings.ToLower(name)
		hosts = append(hosts, name, name+".local")
	}
	for i, h := range hosts {
		hosts[i] = strings.ToLower(strings.TrimSuffix(h, "."))
	}
	cfg.AllowedHosts = hosts
	if cfg.Release.Key == nil {
		key, err := release.DefaultKey()
		if err != nil {
			return cfg, err
		}
		cfg.Release.Key = &key
	}
	if cfg.Release.Channel == "" {
		cfg.Release.Channel = release.Stable
	}
	if err := release.CheckChannel(cfg.Release.Channel); err != nil {
		return cfg, fmt.Errorf("Config.Release.Channel: %w", err)
	}
	if cfg.Release.Probation == 0 {
		cfg.Release.Probation = release.DefaultProbation
	}
	cfg.Face.Repo = strings.TrimSpace(cfg.Face.Repo)
	if cfg.Face.Repo == "" {
		cfg.Face.Repo = facedetect.DefaultModelRepo
	}
	cfg.Face.File = strings.TrimSpace(cfg.Face.File)
	if cfg.Face.File == "" {
		cfg.Face.File = facedetect.DefaultModelFile
	}
	if cfg.Sim != SimNone { // the simulated robot's own camera and sound, unless told otherwise
		if cfg.Media.Camera == "" {
			cfg.Media.Camera = media.DeviceSim
		}
		if cfg.Media.Microphone == "" {
			cfg.Media.Microphone = media.DeviceLoopback
		}
		if cfg.Media.Speaker == "" {
			cfg.Media.Speaker = media.DeviceLoopback
		}
	} else if err := CheckCamera(cfg.Sim, cfg.Media.Camera); err != nil {
		return cfg, err
	}
	if cfg.Media.Mode.Width == 0 {
		cfg.Media.Mode = media.DefaultVideoMode
	}
	return cfg, nil
}

// DefaultAppsVenv is the apps venv of a daemon on dataDir: <dataDir>/apps_venv, or WirelessAppsVenv
// on the Wireless robot.
func DefaultAppsVenv(dataDir string, wireless bool) string {
	if wireless {
		return WirelessAppsVenv
	}
	return filepath.Join(dataDir, "apps_venv")
}

// CheckNoAuth refuses a daemon without authentication (noAuth) on host unless host is loopback.
func CheckNoAuth(noAuth bool, host string) error {
	if noAuth && !loopbackHost(host) {
		return fmt.Errorf("--no-auth: refusing to listen on %s without authentication: anyone who reaches it could install code and move the robot; listen on 127.0.0.1 (--host) or drop --no-auth", host)
	}
	return nil
}

// CheckCamera refuses the drawn camera (media.DeviceSim) on a robot that is not the simulated one.
func CheckCamera(sim Sim, camera string) error {
	if camera == media.DeviceSim && sim == SimNone {
		return errors.New("--camera sim: only the simulated robot (--sim) has a drawn camera")
	}
	return nil
}

// loopbackHost reports whether a host names loopback only (localhost or a loopback address).
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
