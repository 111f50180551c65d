package access

import (
	"crypto/subtle"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// sessionMaxAge is how long a dashboard login lasts in the browser (until the token changes).
const sessionMaxAge = 30 * 24 * time.Hour

// loginPage is parsed at first use: every program linking the package (robothub too, through robothub
// dev) parsed it at start.
var loginPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Robot daemon: log in</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark">
<style>
/* The dashboard's look (dashboard.css is behind the login): light or dark as the system prefers. */
:root { --bg: #f4f5f7; --panel: #fff; --text: #1d2228; --muted: #6b7580; --line: #e3e6ea; --accent: #2f6fde; --accent-text: #fff; --error: #b3261e; }
@media (prefers-color-scheme: dark) { :root { --bg: #111418; --panel: #1b1f25; --text: #e4e8ee; --muted: #9aa4b0; --line: #2c323a; --accent: #5b93f5; --accent-text: #0b1220; --error: #ff8a80; } }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: var(--text); background: var(--bg); }
header { padding: .7em 1.2em; background: #1d2228; color: #fff; } header h1 { font-size: 1.2em; margin: 0; }
main { max-width: 30em; margin: 2em auto; padding: 1em 1.4em 1.4em; background: var(--panel); border-radius: 10px; box-shadow: 0 1px 3px #0003; }
h2 { font-size: 1.05em; } code { overflow-wrap: anywhere; } .muted { color: var(--muted); } .error { color: var(--error); }
label { display: block; color: var(--muted); font-size: .9em; margin: 1em 0 .3em; }
input { font: inherit; width: 100%; padding: .5em; border-radius: 6px; border: 1px solid var(--line); background: var(--bg); color: var(--text); }
button { font: inherit; margin-top: .8em; padding: .45em 1.2em; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: var(--accent-text); cursor: pointer; }
@media (max-width: 34em) { main { margin: 0; border-radius: 0; } }
</style></head>
<body>
<header><h1>Robot</h1></header>
<main>
<h2>Log in to the robot daemon</h2>
{{if .Error}}<p role="alert" class="error">{{.Error}}</p>{{end}}
<p class="muted">Paste the daemon's API token: the link it printed when it started holds it, or read the file
<code>api-token</code> in its data directory (<code>sudo cat /var/lib/robot-daemon/api-token</code> on the robot).</p>
<form method="post" action="/login">
<label for="token">API token</label><input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Log in</button>
</form></main></body></html>
`))
})

// Login logs a browser in: GET /login?token=T (the link the daemon prints) or the form's
// POST set an HttpOnly, SameSite=Strict cookie and send the browser to the dashboard. GET /login
// without a token shows the form.
func (s *Guard) Login(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Referrer-Policy", "no-referrer") // the link's token must not leave in a Referer
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	var token string
	switch r.Method {
	case http.MethodGet:
		if !r.URL.Query().Has("token") {
			s.showLogin(w, http.StatusOK, "")
			return
		}
		token = r.URL.Query().Get("token")
	case http.MethodPost:
		r.Body = http.MaxBytesReader(w, r.Body, 4096)
		if err := r.ParseForm(); err != nil {
			s.showLogin(w, http.StatusBadRequest, "The form could not be read: send the field token, at most 4 KiB.")
			return
		}
		token = r.PostForm.Get("token")
	}
	token = strings.TrimSpace(token)
	if s.noAuth {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	client := s.ClientKey(r)
	if wait := s.logins.wait(client); wait > 0 {
		secs := int(math.Ceil(wait.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		s.showLogin(w, http.StatusTooManyRequests, fmt.Sprintf("Too many wrong tokens from this client: try again in %d seconds.", secs))
		return
	}
	if subtle.ConstantTimeCompare([]byte(token), []byte(s.token)) != 1 {
		s.logins.failed(client)
		s.log.Warn("refused a dashboard login: wrong token", "peer", r.RemoteAddr, "client", client)
		s.showLogin(w, http.StatusUnauthorized, "That is not this daemon's token.")
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: s.sessionValue(), Path: "/",
		MaxAge: int(sessionMaxAge / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil,
	})
	s.log.Info("dashboard login", "peer", r.RemoteAddr)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *Guard) showLogin(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_ = loginPage().Execute(w, struct{ Error string }{msg})
}

// Failed logins: each client (its user on this machine, or its address) may get the token wrong
// loginBurst times at once, then once per loginEvery; a login before then is answered 429 with
// Retry-After. A right token is never counted.
const (
	loginBurst   = 5
	loginEvery   = 10 * time.Second
	maxLoginKeys = 10000 // clients remembered; those back to a full allowance are forgotten first
)

// loginLimits holds each client's allowance of failed logins.
type loginLimits struct {
	mu      sync.Mutex
	clients map[string]*rate.Limiter
}

// wait is how long client must wait before its next login try is taken (0: now).
func (l *loginLimits) wait(client string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim := l.clients[client]
	if lim == nil {
		return 0
	}
	now := time.Now()
	if lim.TokensAt(now) >= 1 {
		return 0
	}
	r := lim.ReserveN(now, 1)
	defer r.CancelAt(now)
	return r.DelayFrom(now)
}

// failed takes one try from client's allowance.
func (l *loginLimits) failed(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.clients == nil {
		l.clients = map[string]*rate.Limiter{}
	}
	lim := l.clients[client]
	if lim == nil {
		if len(l.clients) >= maxLoginKeys {
			l.forgetRested()
		}
		lim = rate.NewLimiter(rate.Every(loginEvery), loginBurst)
		l.clients[client] = lim
	}
	lim.Allow()
}

// forgetRested drops the clients whose allowance is full again: they are as new ones.
func (l *loginLimits) forgetRested() {
	now := time.Now()
	for k, lim := range l.clients {
		if lim.TokensAt(now) >= loginBurst {
			delete(l.clients, k)
		}
	}
}
