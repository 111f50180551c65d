package robotd

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/robothub/robothub/core/apps"
)

type jobCreated struct {
	JobID string `json:"job_id"`
}

// installRequest is the body of POST /api/apps/install. Clients of the anchor daemon send an app
// info object ({name, source_kind, url, ...}); only url matters here.
type installRequest struct {
	URL *string `json:"url"`
}

func (s *Server) handleInstall(w http.ResponseWriter, r *http.Request) {
	var req installRequest
	if err := decodeBody(w, r, &req, maxBodyBytes, false); err != nil {
		writeError(w, r, s.log, err)
		return
	}
	if req.URL == nil {
		writeError(w, r, s.log, &errBody{"body: field url is required: a hub space URL (<hub>/spaces/<user>/<app>), a git URL or an absolute local path"})
		return
	}
	job, err := s.apps.Install(*req.URL)
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, jobCreated{JobID: job.ID()})
}

// updateRequest is the body of POST /api/apps/update: bring the apps installed from url to revision.
type updateRequest struct {
	URL      *string `json:"url"`
	Revision string  `json:"revision"`
}

func (s *Server) handleUpdate(w http.ResponseWriter, r *http.Request) {
	var req updateRequest
	if err := decodeBody(w, r, &req, maxBodyBytes, false); err != nil {
		writeError(w, r, s.log, err)
		return
	}
	if req.URL == nil {
		writeError(w, r, s.log, &errBody{"body: field url is required: the source an installed app came from (its extra.source)"})
		return
	}
	job, err := s.apps.Update(*req.URL, req.Revision)
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, jobCreated{JobID: job.ID()})
}

func (s *Server) handleRemove(w http.ResponseWriter, r *http.Request) {
	job, err := s.apps.Remove(r.PathValue("app_name"))
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, jobCreated{JobID: job.ID()})
}

func (s *Server) handleJobStatus(w http.ResponseWriter, r *http.Request) {
	job, err := s.apps.Job(r.PathValue("job_id"))
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, job.Info())
}

// handleJobLog streams a job's log as server-sent events: one "log" event per line (the lines
// so far, then new ones as they come), then one "status" event with the final job info, without
// its logs, and the stream ends.
func (s *Server) handleJobLog(w http.ResponseWriter, r *http.Request) {
	job, err := s.apps.Job(r.PathValue("job_id"))
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	stream := startStream(w)
	next := 0
	for {
		lines, status, changed := job.Follow(next)
		next += len(lines)
		for _, line := range lines {
			if err := stream.send("log", []byte(line)); err != nil {
				return
			}
		}
		if status.Finished() {
			info := job.Info()
			info.Logs = nil
			data, _ := json.Marshal(info)
			_ = stream.send("status", data)
			return
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, nonNil(s.apps.List()))
}

func (s *Server) handleListAvailable(w http.ResponseWriter, r *http.Request) {
	list, err := s.apps.ListAvailable(r.Context(), apps.SourceKind(r.PathValue("source_kind")))
	if err != nil && list == nil {
		writeError(w, r, s.log, err)
		return
	}
	if err != nil {
		s.log.Warn("the app catalog is unavailable; listing installed apps only", "err", err)
	}
	writeJSON(w, http.StatusOK, nonNil(list))
}

func nonNil(list []apps.AppInfo) []apps.AppInfo {
	if list == nil {
		return []apps.AppInfo{}
	}
	return list
}

func (s *Server) handleStartApp(w http.ResponseWriter, r *http.Request) {
	st, err := s.apps.Start(r.PathValue("app_name"))
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) handleStopApp(w http.ResponseWriter, r *http.Request) {
	st, err := s.apps.Stop()
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) handleRestartApp(w http.ResponseWriter, r *http.Request) {
	st, err := s.apps.Restart()
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) handleCurrentAppStatus(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.apps.Status())
}

type startupApp struct {
	StartupApp *string `json:"startup_app"`
}

func (s *Server) handleGetStartupApp(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, startupAppBody(s.apps.StartupApp()))
}

func (s *Server) handlePutStartupApp(w http.ResponseWriter, r *http.Request) {
	var req map[string]json.RawMessage
	if err := decodeBody(w, r, &req, maxBodyBytes, false); err != nil {
		writeError(w, r, s.log, err)
		return
	}
	raw, ok := req["startup_app"]
	if !ok {
		writeError(w, r, s.log, &errBody{"body: field startup_app is required: an installed app's name, or null to clear"})
		return
	}
	var name *string
	if err := json.Unmarshal(raw, &name); err != nil {
		writeError(w, r, s.log, &errBody{"body: field startup_app: expected a string or null"})
		return
	}
	value := ""
	if name != nil {
		value = strings.TrimSpace(*name)
	}
	if err := s.apps.SetStartupApp(value); err != nil {
		writeError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, startupAppBody(value))
}

func startupAppBody(name string) startupApp {
	if name == "" {
		return startupApp{}
	}
	return startupApp{StartupApp: &name}
}
