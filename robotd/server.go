package robotd

import (
	"crypto/rand"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/robothub/robothub/internal/hardware/media"
)

// Server is the daemon's HTTP API and dashboard.
type Server struct {
	apps         Apps
	robot        Robot
	media        *media.Media // never nil: every device off when the daemon has none
	mediaWired   bool         // the robot speaks, listens and looks through media
	soundsDir    string       // uploaded sounds
	mediaSocket  string       // the local media socket's path, for local SDKs
	webrtc       *media.WebRTC
	doaWarn      sync.Once
	log          *slog.Logger
	token        string // never empty: a request must present it unless noAuth
	noAuth       bool
	uid          int // the daemon's user: its loopback clients need no token
	bodyTimeout  time.Duration
	streams      streamSlots
	logins       loginLimits
	allowedHosts []string
	version      string
	wireless     bool
	loopbackOnly bool
	started      time.Time
	sim          bool
	ctl          control
	moves        MoveLibraries
	done         <-chan struct{} // closed when the daemon shuts down: ends the streams
	mux          *http.ServeMux
	handler      http.Handler
}

// ServerConfig holds what NewServer needs.
type ServerConfig struct {
	Apps  Apps  // the app lifecycle: ManagerApps(*apps.Manager) in the daemon
	Robot Robot // the robot: *robot.Robot in the daemon
	// Media are the robot's devices, which Robot uses (robot.UseMedia); nil: none, and the
	// robot's backend speaks and draws its camera itself.
	Media        *media.Media
	SoundsDir    string        // where uploaded sounds go
	MediaSocket  string        // the local media socket (media.ListenSocket), "" when there is none
	WebRTC       *media.WebRTC // serves the camera and microphones to WebRTC peers; nil: none
	Log          *slog.Logger
	Token        string        // the API token (--token); empty: a random one nobody knows
	NoAuth       bool          // --no-auth: every client may use the API
	BodyTimeout  time.Duration // reading a request body; 0: DefaultBodyTimeout
	AllowedHosts []string      // host names served besides IP literals and localhost
	Version      string
	Wireless     bool
	// LoopbackOnly: the daemon listens on a loopback address only. Apps read it from the daemon's
	// status and serve their web UI on loopback too, whatever host custom_app_url names.
	LoopbackOnly bool
	Done         <-chan struct{}
	// DataDir keeps the robot's name and the hub token it was logged in with ("": not kept).
	DataDir string
	// HubURL is the hub the robot logs in to ("": none).
	HubURL string
	// Sim: the robot is simulated (--sim), as the daemon's status says.
	Sim bool
	// MoveLibraries finds the recorded moves' libraries (nil: none, every library is not found).
	MoveLibraries MoveLibraries
}

// NewServer returns the daemon's HTTP handler.
func NewServer(cfg ServerConfig) *Server {
	s := &Server{
		apps: cfg.Apps, robot: cfg.Robot, log: cfg.Log, token: cfg.Token, noAuth: cfg.NoAuth, uid: os.Getuid(), allowedHosts: cfg.AllowedHosts,
		version: cfg.Version, wireless: cfg.Wireless, loopbackOnly: cfg.LoopbackOnly, started: time.Now(), done: cfg.Done,
		sim: cfg.Sim, ctl: control{dataDir: cfg.DataDir, hubURL: cfg.HubURL}, moves: cfg.MoveLibraries,
	}
	if s.bodyTimeout = cfg.BodyTimeout; s.bodyTimeout == 0 {
		s.bodyTimeout = DefaultBodyTimeout
	}
	if s.token == "" {
		s.token = rand.Text()
	}
	s.media, s.mediaWired, s.soundsDir, s.mediaSocket, s.webrtc = cfg.Media, cfg.Media != nil, cfg.SoundsDir, cfg.MediaSocket, cfg.WebRTC
	if s.media == nil {
		s.media = media.Open(media.Options{Camera: media.DeviceNone, Microphone: media.DeviceNone, Speaker: media.DeviceNone})
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.mux = http.NewServeMux()
	s.routes(s.mux)
	s.handler = s.guard(s.mux)
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }
