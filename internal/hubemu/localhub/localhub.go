// Package localhub assembles the local hub from its parts: the hub's services (internal/hubemu), its
// spaces (internal/hubemu/spaces) and their git repositories (internal/hubemu/git), the SQLite store
// (internal/hubemu/store), the delivery dispatcher (internal/hubemu/delivery) and the HTTP API
// (internal/hubemu/http). It is
// what robothub hub serve and robothub dev run, and what tests start in-process.
package localhub

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/robothub/robothub/internal/egress"

	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/delivery"
	"github.com/robothub/robothub/internal/hubemu/git"
	hubhttp "github.com/robothub/robothub/internal/hubemu/http"
	"github.com/robothub/robothub/internal/hubemu/spaces"
	"github.com/robothub/robothub/internal/hubemu/store"
)

// Config configures a local hub. The zero value is an in-memory hub with the defaults.
type Config struct {
	// DSN is the SQLite database: a file path, or hubemu.MemoryDSN (the default) for a store that
	// lives as long as the Emulator.
	DSN string
	// ReposDir holds the git repositories of spaces. Default: "repos" beside the DSN file; with
	// MemoryDSN, a temporary directory that Close removes.
	ReposDir string
	// GitPath is the git program, whose git-http-backend serves the spaces. Default "git" on PATH.
	GitPath string
	// DatasetsDir holds datasets served read only for download (internal/hubemu/http/datasets.go):
	// one folder per dataset, DatasetsDir/<owner>/<name>/. Empty: no datasets.
	DatasetsDir string
	// ModelsDir holds models served read only the same way, ModelsDir/<owner>/<name>/ (the robot
	// daemon's face model in the tests). Empty: no models.
	ModelsDir string

	// AllowDeliveryTo lists the targets deliveries may reach although they are this machine's own
	// or link-local (egress.ParseAllowlist reads them: host:port or CIDR). Default none.
	AllowDeliveryTo []string
	// Private lists files that jobs must not read besides the database and the repositories,
	// which they never read (hub serve's token file).
	Private []string

	// The rest is the services' and the deliveries' configuration: see hubemu.Config and
	// delivery.Config.
	PublicURL    string
	TriggerLimit int
	Delivery     delivery.Policy
	JobTimeout   time.Duration
	JobPath      string
	AllowJobs    bool
	HTTPClient   *http.Client
	Logger       *slog.Logger
	Now          func() time.Time
}

// Emulator is the local hub, assembled: serve Handler, call Run to deliver events and run jobs,
// and call the services (CreateToken, Bootstrap, ...) directly.
type Emulator struct {
	*hubemu.Emulator
	*spaces.Service
	db         *store.DB
	dispatcher *delivery.Dispatcher
	repos      *git.Repos
	handler    http.Handler
}

// Open opens (creating and migrating if needed) the hub's database and its repositories' directory.
func Open(ctx context.Context, cfg Config) (*Emulator, error) {
	if cfg.DSN == "" {
		cfg.DSN = hubemu.MemoryDSN
	}
	repos, err := openRepos(cfg)
	if err != nil {
		return nil, err
	}
	allow, err := egress.ParseAllowlist(cfg.AllowDeliveryTo)
	if err != nil {
		return nil, fmt.Errorf("allowed delivery targets: %w", err)
	}
	db, err := store.Open(ctx, cfg.DSN)
	if err != nil {
		_ = repos.Close()
		return nil, err
	}
	private := append([]string{repos.Root()}, cfg.Private...)
	if cfg.DSN != hubemu.MemoryDSN {
		private = append(private, filepath.Dir(cfg.DSN))
	}
	d := delivery.New(db, delivery.Config{Policy: cfg.Delivery, Allow: allow, AllowJobs: cfg.AllowJobs, JobTimeout: cfg.JobTimeout,
		JobPath: cfg.JobPath, Private: private, HTTPClient: cfg.HTTPClient, Logger: cfg.Logger, Now: cfg.Now})
	emu := hubemu.New(hubemu.Config{PublicURL: cfg.PublicURL, TriggerLimit: cfg.TriggerLimit, AllowJobs: cfg.AllowJobs,
		Logger: cfg.Logger, Now: cfg.Now}, db, d)
	sp := spaces.New(emu, db, repos)
	return &Emulator{Emulator: emu, Service: sp, db: db, dispatcher: d, repos: repos, handler: hubhttp.NewServer(emu, sp, repos, cfg.DatasetsDir, cfg.ModelsDir)}, nil
}

// Close closes the database and removes the repositories of an in-memory hub. Stop Run and the
// HTTP server first.
func (e *Emulator) Close() error {
	err := e.db.Close()
	if rerr := e.repos.Close(); err == nil {
		err = rerr
	}
	return err
}

// Run delivers events and runs jobs until ctx ends (delivery.Dispatcher.Run).
func (e *Emulator) Run(ctx context.Context) error { return e.dispatcher.Run(ctx) }

// Handler is the hub's HTTP API (internal/hubemu/http): it never listens itself.
func (e *Emulator) Handler() http.Handler { return e.handler }

// ReposDir is the directory of the spaces' repositories.
func (e *Emulator) ReposDir() string { return e.repos.Root() }

// openRepos prepares the directory of the spaces' git repositories.
func openRepos(cfg Config) (*git.Repos, error) {
	dir, temporary := cfg.ReposDir, false
	switch {
	case dir != "":
	case cfg.DSN == hubemu.MemoryDSN:
		d, err := os.MkdirTemp("", "robothub-hub-repos-")
		if err != nil {
			return nil, fmt.Errorf("making a directory for the spaces' repositories: %w", err)
		}
		dir, temporary = d, true
	default:
		dir = filepath.Join(filepath.Dir(cfg.DSN), "repos")
	}
	return git.Open(dir, cfg.GitPath, temporary)
}
