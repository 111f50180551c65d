package webhook

import (
	"bytes"
	"cmp"
	_ "embed"
	"html/template"
	"net/http"
	"strings"
)

//go:embed landing.html
var landingHTML string

var landingTemplate = template.Must(template.New("landing").Parse(landingHTML))

type landingData struct {
	Routes    []Route
	SecretSet bool
	Base      string // where the hub should send deliveries
	Local     bool   // Base is a loopback or private address the hub cannot reach
	Example   string // a route URL for the examples
}

func (s *Server) serveLanding(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "the landing page answers GET")
		return
	}
	base := s.PublicURL()
	local := false
	if base == "" {
		base = requestBase(r)
		local = isLocalHost(r.Host)
	}
	d := landingData{Routes: s.Routes(), SecretSet: s.secret.IsSet(), Base: base, Local: local,
		Example: base + RoutePrefix + "<name>"}
	if len(d.Routes) > 0 {
		d.Example = base + d.Routes[0].Path
	}
	var buf bytes.Buffer
	if err := landingTemplate.Execute(&buf, d); err != nil {
		writeError(w, http.StatusInternalServerError, "rendering the landing page: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// requestBase is the scheme and host the client used, honouring a proxy's X-Forwarded-Proto.
func requestBase(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + cmp.Or(r.Host, "localhost")
}

func isLocalHost(hostport string) bool {
	host := hostport
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		host = host[:i]
	}
	host = strings.Trim(host, "[]")
	return host == "localhost" || strings.HasPrefix(host, "127.") || host == "::1" || host == "0.0.0.0" ||
		strings.HasPrefix(host, "10.") || strings.HasPrefix(host, "192.168.")
}
