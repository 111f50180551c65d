package appsapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/fault"

	"github.com/robothub/robothub/robotd/httpapi"
)

type jobCreated struct {
	JobID string `json:"job_id"`
}

// installRequest is the body of POST /api/apps/install: either ours, {url}, or the public daemon's
// app info, {name, source_kind, url?, ...} (its other fields are ignored).
type installRequest struct {
	URL        *string `json:"url"`
	Name       *string `json:"name"`
	SourceKind *string `json:"source_kind"`
}

// installSource is what an install request installs from: a URL (a hub space, a git URL or an
// absolute local path). For the public body: hf_space and dashboard_selection are a space, by its
// url or else its name (owner/app, on the daemon's hub); local is a local path (url, else name);
// installed names an app already installed, which is nothing to install.
func (s *Handlers) installSource(req installRequest) (string, error) {
	if req.SourceKind == nil {
		if req.URL == nil {
			return "", httpapi.BodyError("body: field url is required: a hub space URL (<hub>/spaces/<user>/<app>), a git URL or an absolute local path (or the app info {name, source_kind, url})")
		}
		return *req.URL, nil
	}
	if req.Name == nil || strings.TrimSpace(*req.Name) == "" {
		return "", httpapi.BodyError("body: field name is required with source_kind")
	}
	name := strings.TrimSpace(*req.Name)
	url := ""
	if req.URL != nil {
		url = strings.TrimSpace(*req.URL)
	}
	switch *req.SourceKind {
	case "hf_space", "dashboard_selection":
		if url != "" {
			return url, nil
		}
		if s.hubURL == "" {
			return "", httpapi.BodyError(fmt.Sprintf("body: source_kind %s without url names a space on the hub, and this daemon has no hub (--hub-url none): send the space's url", *req.SourceKind))
		}
		if !apps.SpaceIDPattern().MatchString(name) {
			return "", httpapi.BodyError(fmt.Sprintf("body: name %q is not a space ID (owner/app): send the space's url", name))
		}
		return strings.TrimRight(s.hubURL, "/") + "/spaces/" + name, nil
	case "local":
		if url != "" {
			return url, nil
		}
		return name, nil
	case "installed":
		return "", fault.Refusedf("body: source_kind installed: app %s is installed already, there is nothing to install (start it with /api/apps/start-app/%s)", name, name)
	default:
		// 400 as the issue asks (a kind this daemon does not install from), not 422.
		return "", fault.Refusedf("body: source_kind %q is not one of hf_space, dashboard_selection, local, installed", *req.SourceKind)
	}
}

func (s *Handlers) Install(w http.ResponseWriter, r *http.Request) {
	wait, err := httpapi.BoolQuery(r, "wait")
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	var req installRequest
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, false); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	src, err := s.installSource(req)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	job, err := s.apps.Install(src)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if wait {
		s.answerWhenDone(w, r, job)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, jobCreated{JobID: job.ID()})
}

// finishedJob is the answer of a job waited for (?wait=true): the job's final snapshot, its
// job_id as the immediate answer has it, and for a failed job the error as the API's detail.
type finishedJob struct {
	JobID string `json:"job_id"`
	apps.JobInfo
	Detail string `json:"detail,omitempty"`
}

// answerWhenDone answers once job has finished: 200 with its snapshot when it is done, 500 with
// the job's error as detail when it failed (the request was fine; the install was not). A client
// that stops waiting leaves the job running, as without ?wait.
func (s *Handlers) answerWhenDone(w http.ResponseWriter, r *http.Request, job Job) {
	release, ok := s.clients.AcquireStream(w, r)
	if !ok {
		return
	}
	defer release()
	for {
		_, status, changed := job.Follow(math.MaxInt)
		if status.Finished() {
			break
		}
		if !s.waitChange(r.Context(), changed) {
			if r.Context().Err() == nil { // the daemon is shutting down
				httpapi.WriteJSON(w, http.StatusServiceUnavailable, httpapi.Detail{Detail: "The daemon is shutting down; job " + job.ID() + " did not finish"})
			}
			return
		}
	}
	info := job.Info()
	out := finishedJob{JobID: info.ID, JobInfo: info}
	if info.Status == apps.JobFailed && info.Error != nil {
		out.Detail = fmt.Sprintf("Job %s failed: %s", info.ID, *info.Error)
		httpapi.WriteJSON(w, http.StatusInternalServerError, out)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

// updateRequest is the body of POST /api/apps/update: bring the apps installed from url to revision.
type updateRequest struct {
	URL      *string `json:"url"`
	Revision string  `json:"revision"`
}

func (s *Handlers) Update(w http.ResponseWriter, r *http.Request) {
	var req updateRequest
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, false); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if req.URL == nil {
		httpapi.WriteError(w, r, s.log, httpapi.BodyError("body: field url is required: the source an installed app came from (its extra.source)"))
		return
	}
	job, err := s.apps.Update(*req.URL, req.Revision)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, jobCreated{JobID: job.ID()})
}

func (s *Handlers) Remove(w http.ResponseWriter, r *http.Request) {
	job, err := s.apps.Remove(r.PathValue("app_name"))
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, jobCreated{JobID: job.ID()})
}

func (s *Handlers) JobStatus(w http.ResponseWriter, r *http.Request) {
	job, err := s.apps.Job(r.PathValue("job_id"))
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, job.Info())
}

// CancelJob cancels a job and answers its final JobInfo once it has ended.
func (s *Handlers) CancelJob(w http.ResponseWriter, r *http.Request) {
	info, err := s.apps.CancelJob(r.PathValue("job_id"))
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, info)
}

// JobLog streams a job's log as server-sent events: one "log" event per line (the lines
// so far, then new ones as they come), then one "status" event with the final job info, without
// its logs, and the stream ends.
func (s *Handlers) JobLog(w http.ResponseWriter, r *http.Request) {
	job, err := s.apps.Job(r.PathValue("job_id"))
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	release, ok := s.clients.AcquireStream(w, r)
	if !ok {
		return
	}
	defer release()
	stream := httpapi.StartStream(w)
	next := 0
	for {
		lines, status, changed := job.Follow(next)
		next += len(lines)
		for _, line := range lines {
			if err := stream.Send("log", []byte(line)); err != nil {
				return
			}
		}
		if status.Finished() {
			info := job.Info()
			info.Logs = nil
			data, _ := json.Marshal(info)
			_ = stream.Send("status", data)
			return
		}
		if !s.waitChange(r.Context(), changed) {
			return
		}
	}
}

func (s *Handlers) List(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, nonNil(s.apps.List()))
}

func (s *Handlers) ListAvailable(w http.ResponseWriter, r *http.Request) {
	refresh, err := httpapi.BoolQuery(r, "refresh")
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if refresh { // the app store's refresh control, and the receiver after a push to a space
		s.apps.RefreshCatalog()
	}
	list, err := s.apps.ListAvailable(r.Context(), apps.SourceKind(r.PathValue("source_kind")))
	if err != nil && list == nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if err != nil {
		s.log.Warn("the app catalog is unavailable; listing installed apps only", "err", err)
	}
	httpapi.WriteJSON(w, http.StatusOK, nonNil(list))
}

func nonNil(list []apps.AppInfo) []apps.AppInfo {
	if list == nil {
		return []apps.AppInfo{}
	}
	return list
}

func (s *Handlers) StartApp(w http.ResponseWriter, r *http.Request) {
	st, err := s.apps.Start(r.PathValue("app_name"))
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, st)
}

func (s *Handlers) StartAppNoEvict(w http.ResponseWriter, r *http.Request) {
	st, err := s.apps.StartNoEvict(r.PathValue("app_name"))
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, st)
}

// StopApp answers null once the app has exited, as the public daemon does (how it ended is
// in the daemon's log and the app's log stream).
func (s *Handlers) StopApp(w http.ResponseWriter, r *http.Request) {
	st, err := s.apps.Stop()
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if st.Error != nil {
		s.log.Warn("app stopped", "app", st.Info.Name, "state", st.State, "err", *st.Error)
	} else {
		s.log.Info("app stopped", "app", st.Info.Name, "state", st.State)
	}
	httpapi.WriteJSON(w, http.StatusOK, nil)
}

func (s *Handlers) RestartApp(w http.ResponseWriter, r *http.Request) {
	st, err := s.apps.Restart()
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, st)
}

func (s *Handlers) CurrentAppStatus(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, s.apps.Status())
}

// CurrentAppLogs streams the output of the current app run (or of the last one, when it
// ended by itself) as server-sent events: one "log" event per line, {"stream", "line"} (the kept
// lines, then new ones), then one "end" event once it has exited, with its AppStatus (null when it
// was stopped), and the stream ends. 204 when there is no such run: an EventSource then stops reconnecting.
func (s *Handlers) CurrentAppLogs(w http.ResponseWriter, r *http.Request) {
	output, _ := s.apps.Output()
	if output == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	stream := httpapi.StartStream(w)
	next := 0
	for {
		lines, n, ended, changed := output.Follow(next)
		next = n
		for _, line := range lines {
			data, _ := json.Marshal(line)
			if err := stream.Send("log", data); err != nil {
				return
			}
		}
		if ended {
			// The run's status (done, or error with its cause), or null when it was stopped: a
			// stopped app is no current app, and a newer run may hold the slot already.
			var st *apps.AppStatus
			if o, now := s.apps.Output(); o == output {
				st = now
			}
			data, _ := json.Marshal(st)
			_ = stream.Send("end", data)
			return
		}
		if !s.waitChange(r.Context(), changed) {
			return
		}
	}
}

type startupApp struct {
	StartupApp *string `json:"startup_app"`
}

func (s *Handlers) GetStartupApp(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, startupAppBody(s.apps.StartupApp()))
}

func (s *Handlers) PutStartupApp(w http.ResponseWriter, r *http.Request) {
	// The anchor's body model has startup_app default to null: {} clears the setting, as null does.
	var req map[string]json.RawMessage
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, false); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	var name *string
	if raw, ok := req["startup_app"]; ok {
		if err := json.Unmarshal(raw, &name); err != nil {
			httpapi.WriteError(w, r, s.log, httpapi.BodyError("body: field startup_app: expected an installed app's name, or null to clear"))
			return
		}
	}
	value := ""
	if name != nil {
		value = strings.TrimSpace(*name)
	}
	if err := s.apps.SetStartupApp(value); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, startupAppBody(value))
}

func startupAppBody(name string) startupApp {
	if name == "" {
		return startupApp{}
	}
	return startupApp{StartupApp: &name}
}

// privateSpaceRequest is the body of POST /api/apps/install-private-space.
type privateSpaceRequest struct {
	SpaceID *string `json:"space_id"`
	Token   string  `json:"token"` // optional: a hub token for this install only
}

func (s *Handlers) InstallPrivateSpace(w http.ResponseWriter, r *http.Request) {
	var req privateSpaceRequest
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, false); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if req.SpaceID == nil {
		httpapi.WriteError(w, r, s.log, httpapi.BodyError("body: field space_id is required: <user>/<space> on the daemon's hub"))
		return
	}
	token := req.Token
	if token == "" {
		token = s.hubToken() // the robot's hub login (/api/hf-auth/save-token), else the daemon's own
	}
	job, err := s.apps.InstallPrivateSpaceWithToken(*req.SpaceID, token)
	if errors.Is(err, apps.ErrNoHubToken) {
		httpapi.WriteJSON(w, http.StatusUnauthorized, httpapi.Detail{Detail: err.Error()})
		return
	}
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, jobCreated{JobID: job.ID()})
}

func (s *Handlers) CheckUpdates(w http.ResponseWriter, r *http.Request) {
	force, err := httpapi.BoolQuery(r, "force")
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	res, err := s.apps.CheckUpdates(r.Context(), force)
	if err == nil && res.AppsWithUpdates == nil {
		res.AppsWithUpdates = []apps.AppUpdateStatus{} // an array, as the public shape says, never null
	}
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, res)
}

func (s *Handlers) UpdateApp(w http.ResponseWriter, r *http.Request) {
	job, err := s.apps.UpdateApp(r.PathValue("app_name"))
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, jobCreated{JobID: job.ID()})
}

// JobWebSocket streams a job as the anchor's ws/apps-manager/{job_id} does (httpapi.JobLogSocket):
// each new log line as a text message, then a JSON message with the status and those lines, until
// the job ends; an unknown job gets {"error": "Job ID not found"} and the socket closes. Browsers
// of other origins are refused by the websocket library's origin check.
func (s *Handlers) JobWebSocket(w http.ResponseWriter, r *http.Request) {
	release, ok := s.clients.AcquireStream(w, r)
	if !ok {
		return
	}
	defer release()
	httpapi.JobLogSocket(w, r, func() (httpapi.FollowedJob, error) {
		job, err := s.apps.Job(r.PathValue("job_id"))
		if err != nil {
			return httpapi.FollowedJob{}, err
		}
		return httpapi.FollowedJob{Command: job.Info().Command, Follow: func(from int) ([]string, string, bool, <-chan struct{}) {
			lines, status, changed := job.Follow(from)
			return lines, string(status), status.Finished(), changed
		}}, nil
	}, s.done, "daemon shutting down")
}

// waitChange waits for a followed job or app run to change; false when the client left or the
// daemon is shutting down, and the stream should end.
func (s *Handlers) waitChange(ctx context.Context, changed <-chan struct{}) bool {
	select {
	case <-changed:
		return true
	case <-ctx.Done():
	case <-s.done:
	}
	return false
}
