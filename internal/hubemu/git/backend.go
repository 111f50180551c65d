package git

import (
	"bufio"
	"log/slog"
	"net/http"
	"net/http/cgi"
	"strings"
)

// Serve answers a request of git's smart HTTP protocol (clone, fetch, push: path is what follows
// the space's address, such as /info/refs) through git http-backend. The caller has checked the
// space and the caller's access; remoteUser (the caller's name, "" for an anonymous one) is what
// lets git http-backend accept a push. The request's length must be known (CGI passes it on): the
// caller spools a body sent in chunks. The Authorization header goes no further than here.
func (g *Repos) Serve(w http.ResponseWriter, r *http.Request, space, path, remoteUser string, log *slog.Logger) {
	backend, err := g.httpBackend()
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	owner, name, _ := strings.Cut(space, "/")
	req := r.Clone(r.Context())
	req.URL.Path = "/" + owner + "/" + name + ".git" + path
	req.URL.RawPath = ""
	req.Header.Del("Authorization")
	env := append(g.env(), "GIT_PROJECT_ROOT="+g.projectRoot(), "GIT_HTTP_EXPORT_ALL=1")
	if remoteUser != "" {
		env = append(env, "REMOTE_USER="+remoteUser)
	}
	h := &cgi.Handler{
		Path:   backend,
		Dir:    g.root,
		Env:    env,
		Logger: slog.NewLogLogger(log.Handler(), slog.LevelError),
		Stderr: &stderrLog{log: log, space: space},
	}
	h.ServeHTTP(w, req)
}

// stderrLog logs what git http-backend writes to its standard error, one record per line.
type stderrLog struct {
	log   *slog.Logger
	space string
}

func (g *stderrLog) Write(p []byte) (int, error) {
	sc := bufio.NewScanner(strings.NewReader(string(p)))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			g.log.Warn("git http-backend", "space", g.space, "stderr", line)
		}
	}
	return len(p), nil
}
