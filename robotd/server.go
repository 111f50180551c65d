package robotd

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/robothub/robothub/adapters/hardware/media"
	"github.com/robothub/robothub/robotd/access"
	"github.com/robothub/robothub/robotd/appsapi"
	"github.com/robothub/robothub/robotd/daemonapi"
	"github.com/robothub/robothub/robotd/mediaapi"
	"github.com/robothub/robothub/robotd/robotapi"
	"github.com/robothub/robothub/robotd/updateapi"
)

// Server is the daemon's HTTP API and dashboard.
type Server struct {
	apps      Apps
	robot     Robot
	log       *slog.Logger
	access    *access.Guard
	robotAPI  *robotapi.Handlers
	mediaAPI  *mediaapi.Handlers
	appsAPI   *appsapi.Handlers
	updateAPI *updateapi.Handlers
	daemonAPI *daemonapi.Handlers
	moves     MoveLibraries
	done      <-chan struct{} // closed when the daemon shuts down: ends the streams
	mux       *http.ServeMux
	handler   http.Handler
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
	BodyTimeout  time.Duration // reading a request body; 0: httpapi.DefaultBodyTimeout
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
	// Updater runs the daemon's own updates (nil: none, the update routes say the daemon cannot
	// update itself).
	Updater updateapi.Updater
	// Access checks every request; nil: NewGuard(cfg). The daemon passes the guard that checked
	// requests while it started (Starting).
	Access *access.Guard
}

// NewGuard returns the access checks of cfg's Token, NoAuth, AllowedHosts, BodyTimeout and Log.
func NewGuard(cfg ServerConfig) *access.Guard {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return access.New(access.Config{Token: cfg.Token, NoAuth: cfg.NoAuth, UID: os.Getuid(), AllowedHosts: cfg.AllowedHosts,
		BodyTimeout: cfg.BodyTimeout, Log: log})
}

// NewServer returns the daemon's HTTP handler.
func NewServer(cfg ServerConfig) *Server {
	s := &Server{
		apps: cfg.Apps, robot: cfg.Robot, log: cfg.Log, done: cfg.Done, moves: cfg.MoveLibraries,
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.access = cfg.Access
	if s.access == nil {
		s.access = NewGuard(cfg)
	}
	s.daemonAPI = daemonapi.New(daemonapi.Config{Apps: s.apps, Robot: s.robot, Log: s.log, Version: cfg.Version,
		Wireless: cfg.Wireless, LoopbackOnly: cfg.LoopbackOnly, Sim: cfg.Sim, Started: time.Now(), DataDir: cfg.DataDir, HubURL: cfg.HubURL})
	s.robotAPI = robotapi.New(robotapi.Config{Robot: s.robot, Moves: s.moves, Clients: s.access, Log: s.log, Done: s.done})
	s.mediaAPI = mediaapi.New(mediaapi.Config{Robot: s.robot, Media: cfg.Media, SoundsDir: cfg.SoundsDir,
		MediaSocket: cfg.MediaSocket, WebRTC: cfg.WebRTC, Log: s.log})
	s.appsAPI = appsapi.New(appsapi.Config{Apps: s.apps, Clients: s.access, Log: s.log, Done: s.done,
		HubURL: cfg.HubURL, HubToken: s.daemonAPI.HubToken})
	up := cfg.Updater
	if up == nil {
		up = noUpdater{version: cfg.Version}
	}
	s.updateAPI = updateapi.New(up, s.log, s.done)
	s.mux = http.NewServeMux()
	s.routes(s.mux)
	s.handler = s.access.Handler(s.mux)
	return s
}

// ConnContext carries what the listeners proved of each connection (the owner socket's peer) into
// its requests: set it as the http.Server's ConnContext.
func (s *Server) ConnContext(ctx context.Context, c net.Conn) context.Context {
	return s.access.ConnContext(ctx, c)
}

// Listener wraps ln, the daemon's TCP listener, with the connection caps (access.Guard.Listener).
// Serve the server on it, with ConnContext.
func (s *Server) Listener(ln net.Listener) net.Listener { return s.access.Listener(ln) }

// OwnerListener wraps ln, the owner's unix socket (access.ListenOwnerSocket): its peers are checked
// with SO_PEERCRED, and those let in are the owner. Serve the server on it too.
func (s *Server) OwnerListener(ln net.Listener) net.Listener { return s.access.OwnerListener(ln) }

// MintAppToken makes the token of one run of an app (access.AppScopes), valid until revoke.
func (s *Server) MintAppToken(app string) (token string, revoke func()) {
	return s.access.MintAppToken(app)
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }
