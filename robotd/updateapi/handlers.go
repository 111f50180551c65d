// Package updateapi is the daemon's self-update routes under /api/update, with the anchor daemon's
// paths and shapes (available, start, info, ws/logs, install-source), over Updater (core/release's
// in the daemon). They change the program that drives the robot: the owner's only (issue 30 puts
// the scopes on tokens; until then every caller with the daemon's token is the owner).
package updateapi

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/robothub/robothub/core/release"
	"github.com/robothub/robothub/robotd/httpapi"
)

// Updater is the daemon's update jobs, as the routes use them.
type Updater interface {
	Running() string
	Busy() bool
	Available(ctx context.Context, preRelease bool) release.Availability
	Start(req release.StartRequest) (*release.Job, error)
	Job(id string) (*release.Job, error)
	InstallSource() release.InstallSource
}

var _ Updater = (*release.Updater)(nil)

// Handlers serves the update routes.
type Handlers struct {
	up   Updater
	log  *slog.Logger
	done <-chan struct{} // closed when the daemon shuts down: ends the streams
}

// New returns the update routes.
func New(up Updater, log *slog.Logger, done <-chan struct{}) *Handlers {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handlers{up: up, log: log, done: done}
}

// available is the anchor's answer, {"update": {<package>: {...}}}, under this daemon's name.
type available struct {
	Update map[string]release.Availability `json:"update"`
}

// Available answers GET /api/update/available?pre_release=: the running version and the newest of
// the channel. A repository that cannot be read is is_available false, available_version
// "unknown" and its error, as the anchor answers when its index cannot be reached.
func (h *Handlers) Available(w http.ResponseWriter, r *http.Request) {
	pre, err := httpapi.BoolQuery(r, "pre_release")
	if err != nil {
		httpapi.WriteError(w, r, h.log, err)
		return
	}
	if h.up.Busy() {
		httpapi.WriteJSON(w, http.StatusBadRequest, httpapi.Detail{Detail: "Update is in progress"})
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, available{Update: map[string]release.Availability{"robot_daemon": h.up.Available(r.Context(), pre)}})
}

type jobCreated struct {
	JobID string `json:"job_id"`
}

// Start answers POST /api/update/start?pre_release=&version=&allow_downgrade=: a job that updates
// to version (default: the channel's newest).
func (h *Handlers) Start(w http.ResponseWriter, r *http.Request) {
	var req release.StartRequest
	var err error
	if req.PreRelease, err = httpapi.BoolQuery(r, "pre_release"); err == nil {
		req.AllowDowngrade, err = httpapi.BoolQuery(r, "allow_downgrade")
	}
	if err != nil {
		httpapi.WriteError(w, r, h.log, err)
		return
	}
	req.Version = r.URL.Query().Get("version")
	job, err := h.up.Start(req)
	if err != nil {
		httpapi.WriteError(w, r, h.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, jobCreated{JobID: job.ID()})
}

// Info answers GET /api/update/info?job_id=: the job's {command, status, logs} and what it came to.
func (h *Handlers) Info(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("job_id")
	if id == "" {
		httpapi.WriteError(w, r, h.log, httpapi.BodyError("query parameter job_id is required"))
		return
	}
	job, err := h.up.Job(id)
	if err != nil {
		httpapi.WriteError(w, r, h.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, job.Info())
}

// InstallSource answers GET /api/update/install-source.
func (h *Handlers) InstallSource(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, h.up.InstallSource())
}

// Logs streams a job on GET /api/update/ws/logs?job_id= as the anchor does (httpapi.JobLogSocket):
// each new log line as a text message, then {command, status, logs} with those lines, until the job
// ends (or this daemon stops to hand over to the new release: the socket closes with "going
// away"); an unknown job gets {"error": "Job ID not found"}.
func (h *Handlers) Logs(w http.ResponseWriter, r *http.Request) {
	httpapi.JobLogSocket(w, r, func() (httpapi.FollowedJob, error) {
		job, err := h.up.Job(r.URL.Query().Get("job_id"))
		if err != nil {
			return httpapi.FollowedJob{}, err
		}
		return httpapi.FollowedJob{Command: release.JobCommand, Follow: func(from int) ([]string, string, bool, <-chan struct{}) {
			lines, status, changed := job.Follow(from)
			return lines, status, release.Finished(status), changed
		}}, nil
	}, h.done, "the daemon restarts into the new release")
}
