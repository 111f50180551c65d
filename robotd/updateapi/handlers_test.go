package updateapi_test

import (
	"context"
	"crypto/rand"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/release"
	"github.com/robothub/robothub/robotd/updateapi"
)

type repo map[string][]byte

func (r repo) Get(_ context.Context, p string) ([]byte, error) {
	if d, ok := r[p]; ok {
		return d, nil
	}
	return nil, fault.NotFoundf("%s: not found", p)
}

// program is a release's program for the routes' tests: an ELF header for amd64, never run (the
// smoke test is the fake's); they need the job's path up to the hand-over only.
func program(version string) []byte {
	b := make([]byte, 4096)
	copy(b, elf.ELFMAG)
	b[elf.EI_CLASS], b[elf.EI_DATA], b[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	binary.LittleEndian.PutUint16(b[16:], uint16(elf.ET_EXEC))
	binary.LittleEndian.PutUint16(b[18:], uint16(elf.EM_X86_64))
	binary.LittleEndian.PutUint32(b[20:], uint32(elf.EV_CURRENT))
	binary.LittleEndian.PutUint16(b[52:], 64)
	rand.Read(b[64:])
	return b
}

type server struct {
	*httptest.Server
	handed chan *release.Record
}

func start(t *testing.T, versions ...string) *server {
	t.Helper()
	_, secret, _ := release.GenerateKey()
	key, _ := release.ParseSigningKey(secret, "")
	r := repo{}
	var ix *release.Index
	for _, s := range versions {
		v, _ := release.ParseVersion(s)
		files, _, err := release.Assemble(v, []release.Binary{{Program: release.Program, OS: "linux", Arch: "amd64", Data: program(s)}}, key, 0, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			r[f.Path] = f.Content
		}
		ix = ix.With(v)
	}
	r["channels.json"] = ix.Bytes()
	dir := t.TempDir()
	s := &server{handed: make(chan *release.Record, 1)}
	up := release.NewUpdater(release.UpdaterConfig{
		Layout: release.Layout{Dir: filepath.Join(dir, "releases")}, Repo: release.Repo{Type: "space", ID: "robothub/releases"}, Key: key.Public(),
		Open:    func(context.Context) (release.Source, string, error) { return r, "0123456789abcdef", nil },
		Running: "1.1.0", Self: filepath.Join(dir, "robot-daemon"), GOOS: "linux", GOARCH: "amd64",
		Handover:  func(rec *release.Record) error { s.handed <- rec; return nil },
		SmokeTest: func(context.Context, string, release.Version) error { return nil },
	})
	mux := http.NewServeMux()
	h := updateapi.New(up, nil, make(chan struct{}))
	mux.HandleFunc("GET /api/update/available", h.Available)
	mux.HandleFunc("POST /api/update/start", h.Start)
	mux.HandleFunc("GET /api/update/info", h.Info)
	mux.HandleFunc("GET /api/update/ws/logs", h.Logs)
	mux.HandleFunc("GET /api/update/install-source", h.InstallSource)
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func (s *server) call(t *testing.T, method, path string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(method, s.URL+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

func TestAvailableStartInfoLogs(t *testing.T) {
	s := start(t, "1.0.0", "1.1.0", "1.2.0", "1.3.0-rc.1")
	var av struct {
		Update map[string]release.Availability `json:"update"`
	}
	if code := s.call(t, "GET", "/api/update/available", &av); code != 200 || av.Update["robot_daemon"] != (release.Availability{Current: "1.1.0", Available: "1.2.0", Is: true, Channel: "stable"}) {
		t.Fatalf("available: %d %+v", code, av)
	}
	s.call(t, "GET", "/api/update/available?pre_release=true", &av)
	if a := av.Update["robot_daemon"]; a.Available != "1.3.0-rc.1" || a.Channel != "pre-release" {
		t.Fatalf("available pre-release: %+v", a)
	}
	var created struct {
		JobID string `json:"job_id"`
	}
	if code := s.call(t, "POST", "/api/update/start", &created); code != 200 || created.JobID == "" {
		t.Fatalf("start: %d %+v", code, created)
	}
	conn, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(s.URL, "http")+"/api/update/ws/logs?job_id="+created.JobID, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	var rec *release.Record
	select {
	case rec = <-s.handed:
	case <-time.After(10 * time.Second):
		var info release.JobInfo
		s.call(t, "GET", "/api/update/info?job_id="+created.JobID, &info)
		t.Fatalf("no hand-over: %+v", info)
	}
	if rec.To != "1.2.0" || rec.From != "1.1.0" || rec.State != release.StateStarting {
		t.Fatalf("record %+v", rec)
	}
	if b, err := os.ReadFile(rec.ToProgram); err != nil || len(b) != 4096 {
		t.Fatalf("the new program %s: %d bytes, %v", rec.ToProgram, len(b), err)
	}
	var text []string
	for len(text) < 3 {
		_, msg, err := conn.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(msg), "{") {
			text = append(text, string(msg))
		}
	}
	if !strings.Contains(strings.Join(text, "\n"), "checking spaces/robothub/releases") {
		t.Errorf("ws/logs: %q", text)
	}
	var info release.JobInfo
	if code := s.call(t, "GET", "/api/update/info?job_id="+created.JobID, &info); code != 200 || info.Command != "update_robot_daemon" || info.To != "1.2.0" {
		t.Fatalf("info: %d %+v", code, info)
	}
	if !strings.Contains(strings.Join(info.Logs, "\n"), "signature by release key") {
		t.Errorf("logs: %q", info.Logs)
	}
}

func TestBadStarts(t *testing.T) {
	s := start(t, "1.0.0", "1.1.0")
	var d struct{ Detail string }
	for _, c := range []struct {
		path string
		code int
		want string
	}{
		{"/api/update/start?version=1.0.0", 400, "a downgrade needs allow_downgrade"},
		{"/api/update/start?version=1.1.0", 400, "1.1.0 already runs"},
		{"/api/update/start?version=latest", 422, "is not a release version"},
		{"/api/update/start?allow_downgrade=maybe", 422, "allow_downgrade: must be true or false"},
		{"/api/update/info?job_id=nope", 404, "Job ID not found"},
		{"/api/update/info", 422, "job_id is required"},
	} {
		method := "POST"
		if strings.Contains(c.path, "info") {
			method = "GET"
		}
		d.Detail = ""
		if code := s.call(t, method, c.path, &d); code != c.code || !strings.Contains(d.Detail, c.want) {
			t.Errorf("%s %s: %d %q, want %d %q", method, c.path, code, d.Detail, c.code, c.want)
		}
	}
	// No newer release: the job fails and says so.
	var created struct {
		JobID string `json:"job_id"`
	}
	s.call(t, "POST", "/api/update/start", &created)
	var info release.JobInfo
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if s.call(t, "GET", "/api/update/info?job_id="+created.JobID, &info); release.Finished(info.Status) {
			break
		}
	}
	if info.Status != "failed" || !strings.Contains(info.Error, "No update available") {
		t.Errorf("update with nothing newer: %+v", info)
	}
}
