package appsapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/internal/testkit/apitest"
	"github.com/robothub/robothub/robotd/appsapi"
)

// fakeJob is a job whose log and status the test drives.
type fakeJob struct {
	mu      sync.Mutex
	info    apps.JobInfo
	changed chan struct{}
}

func newJob(id, command, target string) *fakeJob {
	return &fakeJob{info: apps.JobInfo{ID: id, Command: command, Target: target, Status: apps.JobPending, Created: time.Now()}, changed: make(chan struct{})}
}

func (j *fakeJob) ID() string { return j.info.ID }

func (j *fakeJob) Info() apps.JobInfo {
	j.mu.Lock()
	defer j.mu.Unlock()
	info := j.info
	info.Logs = append([]string{}, j.info.Logs...)
	return info
}

func (j *fakeJob) Follow(from int) ([]string, apps.JobStatus, <-chan struct{}) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var lines []string
	if from < len(j.info.Logs) {
		lines = append(lines, j.info.Logs[from:]...)
	}
	return lines, j.info.Status, j.changed
}

// log adds lines; with a final status (done, failed) the job ends, failed with cause.
func (j *fakeJob) log(status apps.JobStatus, cause string, lines ...string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.info.Logs = append(j.info.Logs, lines...)
	j.info.Status = status
	if cause != "" {
		j.info.Error = &cause
	}
	if status.Finished() {
		now := time.Now()
		j.info.Finished = &now
	}
	close(j.changed)
	j.changed = make(chan struct{})
}

// fakeOutput is an app run's output that the test drives.
type fakeOutput struct {
	mu      sync.Mutex
	lines   []apps.OutputLine
	ended   bool
	changed chan struct{}
}

func (o *fakeOutput) Follow(from int) ([]apps.OutputLine, int, bool, <-chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var lines []apps.OutputLine
	if from < len(o.lines) {
		lines = append(lines, o.lines[from:]...)
	}
	return lines, len(o.lines), o.ended, o.changed
}

func (o *fakeOutput) add(ended bool, lines ...apps.OutputLine) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lines = append(o.lines, lines...)
	o.ended = ended
	close(o.changed)
	o.changed = make(chan struct{})
}

// fakeApps is the app lifecycle as the app routes see it: installed apps by name, jobs the test
// finishes, one slot, sessions, and the errors (with core/fault kinds and the manager's words)
// that the manager answers with. It records what the routes asked of it.
type fakeApps struct {
	mu         sync.Mutex
	seq        int
	installed  map[string]apps.AppInfo
	jobs       map[string]*fakeJob
	requests   []string // "install <url>", "update <url> <rev>", "private <space> <token>", ...
	current    *apps.AppStatus
	output     *fakeOutput
	startup    string
	catalog    []apps.AppInfo
	catalogErr error
	refreshes  int
	updates    *apps.AppUpdates
	sessions   map[string]apps.SessionRequest
}

var _ appsapi.Apps = (*fakeApps)(nil)

func newFakeApps(installed ...string) *fakeApps {
	a := &fakeApps{installed: map[string]apps.AppInfo{}, jobs: map[string]*fakeJob{}, sessions: map[string]apps.SessionRequest{}}
	for _, name := range installed {
		a.installed[name] = apps.AppInfo{Name: name, SourceKind: "local", URL: "/apps/" + name}
	}
	return a
}

func (a *fakeApps) asked() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string{}, a.requests...)
}

func (a *fakeApps) job(command, target, request string) (appsapi.Job, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seq++
	j := newJob(fmt.Sprintf("%016x", a.seq), command, target)
	a.jobs[j.ID()] = j
	a.requests = append(a.requests, request)
	return j, nil
}

func (a *fakeApps) Install(url string) (appsapi.Job, error) {
	if !strings.Contains(url, "/") {
		return nil, fault.Invalidf("url %q: expected a hub space URL, a git URL or an absolute local path", url)
	}
	return a.job("install", url, "install "+url)
}

func (a *fakeApps) Update(url, revision string) (appsapi.Job, error) {
	return a.job("update", url, "update "+url+" "+revision)
}

func (a *fakeApps) UpdateApp(name string) (appsapi.Job, error) {
	if _, ok := a.installed[name]; !ok {
		return nil, fault.NotFoundf("App %s is not installed", name)
	}
	return a.job("update", name, "update-app "+name)
}

func (a *fakeApps) InstallPrivateSpaceWithToken(spaceID, token string) (appsapi.Job, error) {
	if !apps.SpaceIDPattern().MatchString(spaceID) {
		return nil, fault.Invalidf("space_id %q: expected <user>/<space>", spaceID)
	}
	if token == "" {
		return nil, apps.ErrNoHubToken
	}
	return a.job("install", spaceID, "private "+spaceID+" "+token)
}

func (a *fakeApps) Remove(name string) (appsapi.Job, error) {
	if _, ok := a.installed[name]; !ok {
		return nil, fault.NotFoundf("App %s is not installed", name)
	}
	return a.job("remove", name, "remove "+name)
}

func (a *fakeApps) Job(id string) (appsapi.Job, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if j, ok := a.jobs[id]; ok {
		return j, nil
	}
	return nil, fault.NotFoundf("Job %s not found", id)
}

func (a *fakeApps) CancelJob(id string) (apps.JobInfo, error) {
	j, err := a.Job(id)
	if err != nil {
		return apps.JobInfo{}, err
	}
	if j.Info().Status.Finished() {
		return apps.JobInfo{}, fault.Refusedf("Job %s has finished already", id)
	}
	j.(*fakeJob).log(apps.JobFailed, apps.ErrCancelled.Error())
	return j.Info(), nil
}

func (a *fakeApps) Start(name string) (apps.AppStatus, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	info, ok := a.installed[name]
	if !ok {
		return apps.AppStatus{}, fault.NotFoundf("App %s is not installed", name)
	}
	if a.current != nil && a.current.State == apps.StateRunning {
		return apps.AppStatus{}, fault.Refusedf("An app is already running")
	}
	a.current = &apps.AppStatus{Info: info, State: apps.StateRunning}
	a.output = &fakeOutput{changed: make(chan struct{})}
	a.requests = append(a.requests, "start "+name)
	return *a.current, nil
}

func (a *fakeApps) StartNoEvict(name string) (apps.AppStatus, error) { return a.Start(name) }

func (a *fakeApps) Stop() (apps.AppStatus, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.current == nil {
		return apps.AppStatus{}, fault.Refusedf("No app is currently running")
	}
	st := *a.current
	st.State = apps.StateDone
	a.current = nil
	a.output.add(true)
	return st, nil
}

func (a *fakeApps) Restart() (apps.AppStatus, error) {
	a.mu.Lock()
	cur := a.current
	a.mu.Unlock()
	if cur == nil {
		return apps.AppStatus{}, fault.Refusedf("No app is currently running")
	}
	if _, err := a.Stop(); err != nil {
		return apps.AppStatus{}, err
	}
	return a.Start(cur.Info.Name)
}

func (a *fakeApps) Status() *apps.AppStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.current
}

func (a *fakeApps) Output() (appsapi.AppOutput, *apps.AppStatus) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.output == nil {
		return nil, nil
	}
	return a.output, a.current
}

func (a *fakeApps) OpenSession(req apps.SessionRequest) (apps.SessionInfo, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seq++
	id := fmt.Sprintf("s%d", a.seq)
	a.sessions[id] = req
	return apps.SessionInfo{ID: id, Kind: "remote", Client: req.Client, TTL: 10}, nil
}

func (a *fakeApps) Heartbeat(id string) (apps.SessionInfo, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	req, ok := a.sessions[id]
	if !ok {
		return apps.SessionInfo{}, fault.NotFoundf("Session %s not found", id)
	}
	return apps.SessionInfo{ID: id, Kind: "remote", Client: req.Client, TTL: 10}, nil
}

func (a *fakeApps) CloseSession(id string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.sessions[id]; !ok {
		return fault.NotFoundf("Session %s not found", id)
	}
	delete(a.sessions, id)
	return nil
}

func (a *fakeApps) List() []apps.AppInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []apps.AppInfo
	for _, info := range a.installed {
		out = append(out, info)
	}
	return out
}

func (a *fakeApps) ListAvailable(_ context.Context, kind apps.SourceKind) ([]apps.AppInfo, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests = append(a.requests, "list-available "+string(kind))
	return a.catalog, a.catalogErr
}

func (a *fakeApps) RefreshCatalog() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refreshes++
}

func (a *fakeApps) CheckUpdates(_ context.Context, force bool) (*apps.AppUpdates, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests = append(a.requests, fmt.Sprintf("check-updates force=%t", force))
	if a.updates == nil {
		return &apps.AppUpdates{AppsChecked: len(a.installed)}, nil
	}
	return a.updates, nil
}

func (a *fakeApps) StartupApp() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.startup
}

func (a *fakeApps) SetStartupApp(name string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.installed[name]; name != "" && !ok {
		return fault.Refusedf("App %s is not installed: install it before making it the startup app", name)
	}
	a.startup = name
	return nil
}

type daemon struct {
	*apitest.Server
	apps    *fakeApps
	clients *apitest.Clients
	done    chan struct{}
}

// serve serves the app routes over a, as robotd's route table does, with hubToken as the robot's
// hub login.
func serve(t *testing.T, a *fakeApps, hubURL, hubToken string) *daemon {
	t.Helper()
	d := &daemon{apps: a, clients: &apitest.Clients{}, done: make(chan struct{})}
	h := appsapi.New(appsapi.Config{Apps: a, Clients: d.clients, Done: d.done, HubURL: hubURL, HubToken: func() string { return hubToken }})
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/apps/install", h.Install)
	mux.HandleFunc("POST /api/apps/update", h.Update)
	mux.HandleFunc("POST /api/apps/remove/{app_name}", h.Remove)
	mux.HandleFunc("GET /api/apps/job-status/{job_id}", h.JobStatus)
	mux.HandleFunc("GET /api/apps/job-log/{job_id}", h.JobLog)
	mux.HandleFunc("POST /api/apps/cancel-job/{job_id}", h.CancelJob)
	mux.HandleFunc("GET /api/apps/list", h.List)
	mux.HandleFunc("GET /api/apps/list-available", h.ListAvailable)
	mux.HandleFunc("GET /api/apps/list-available/{source_kind}", h.ListAvailable)
	mux.HandleFunc("POST /api/apps/start-app/{app_name}", h.StartApp)
	mux.HandleFunc("POST /api/apps/start-app/{app_name}/no-evict", h.StartAppNoEvict)
	mux.HandleFunc("POST /api/apps/stop-current-app", h.StopApp)
	mux.HandleFunc("POST /api/apps/restart-current-app", h.RestartApp)
	mux.HandleFunc("GET /api/apps/current-app-status", h.CurrentAppStatus)
	mux.HandleFunc("GET /api/apps/current-app-logs", h.CurrentAppLogs)
	mux.HandleFunc("GET /api/apps/startup-app", h.GetStartupApp)
	mux.HandleFunc("PUT /api/apps/startup-app", h.PutStartupApp)
	mux.HandleFunc("POST /api/apps/install-private-space", h.InstallPrivateSpace)
	mux.HandleFunc("GET /api/apps/check-updates", h.CheckUpdates)
	mux.HandleFunc("POST /api/apps/update/{app_name}", h.UpdateApp)
	mux.HandleFunc("GET /api/apps/ws/apps-manager/{job_id}", h.JobWebSocket)
	mux.HandleFunc("POST /api/sessions", h.OpenSession)
	mux.HandleFunc("POST /api/sessions/{session_id}/heartbeat", h.Heartbeat)
	mux.HandleFunc("DELETE /api/sessions/{session_id}", h.CloseSession)
	d.Server = apitest.Serve(t, mux)
	return d
}

// jobOf is the job id, as the routes made it.
func (a *fakeApps) jobOf(t *testing.T, id string) *fakeJob {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	j, ok := a.jobs[id]
	if !ok {
		t.Fatalf("no job %s", id)
	}
	return j
}

// firstJob waits for the routes to make a job (a request in flight) and returns it.
func (a *fakeApps) firstJob() *fakeJob {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		a.mu.Lock()
		for _, j := range a.jobs {
			a.mu.Unlock()
			return j
		}
		a.mu.Unlock()
	}
	return nil
}
