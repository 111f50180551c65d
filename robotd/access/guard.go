// Package access is who may use the robot daemon, and how much: the owner's API token (made on
// first start, checked for strength), the tokens minted for running apps and their scopes, the
// dashboard's login and its cookie, the owner's unix socket (its peer named by the kernel), host
// and cross-site checks, and the per-client caps on connections, streams and failed logins.
// robotd wraps its routes with Guard.Handler and serves on Guard.Listener and OwnerListener;
// route handlers take stream slots through httpapi.Clients.
//
// Identity is proven, never inferred: over TCP (loopback included) a request carries a token or
// the login cookie; on the unix socket the kernel names the peer's user (SO_PEERCRED) when it
// connects. Nothing is decided from a port, an address or a user looked up after the fact.
package access

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/robothub/robothub/robotd/httpapi"
)

// Guard is the daemon's access control: the request checks of Handler, the connection caps of
// Listener, the owner's socket, the apps' tokens, the per-client stream slots, and the
// dashboard's login.
type Guard struct {
	token        string // the owner's; never empty: a request must present it unless noAuth
	noAuth       bool
	uid          int // the daemon's user: its peers on the owner socket are the owner
	allowedHosts []string
	bodyTimeout  time.Duration
	log          *slog.Logger
	streams      streamSlots
	logins       loginLimits

	appsMu    sync.RWMutex
	appTokens map[[sha256.Size]byte]string // SHA-256 of a running app's token -> the app
}

// Config holds what New needs.
type Config struct {
	Token        string        // the owner's API token; empty: a random one nobody knows
	NoAuth       bool          // --no-auth: every client may use the API
	UID          int           // the daemon's user (os.Getuid()): who may use the owner socket
	AllowedHosts []string      // host names served besides IP literals and localhost
	BodyTimeout  time.Duration // reading a request body; 0: httpapi.DefaultBodyTimeout
	Log          *slog.Logger
}

// New returns the access control cfg describes.
func New(cfg Config) *Guard {
	g := &Guard{token: cfg.Token, noAuth: cfg.NoAuth, uid: cfg.UID, allowedHosts: cfg.AllowedHosts,
		bodyTimeout: cfg.BodyTimeout, log: cfg.Log, appTokens: map[[sha256.Size]byte]string{}}
	if g.bodyTimeout == 0 {
		g.bodyTimeout = httpapi.DefaultBodyTimeout
	}
	if g.token == "" {
		g.token = rand.Text()
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	return g
}

// Principal is who a request acts for, as its credential proved it.
type Principal struct {
	Name   string // "owner", "app coop_app"
	Via    string // how it was proven: "token", "login cookie", "owner socket (uid 1000)", "--no-auth"
	Scopes Scope
}

type principalKey struct{}

// PrincipalOf is who r acts for, once Handler has let it in.
func PrincipalOf(r *http.Request) (Principal, bool) {
	p, ok := r.Context().Value(principalKey{}).(Principal)
	return p, ok
}

// MintAppToken makes the token of one run of app: it has AppScopes, and works until revoke is
// called (when the app has exited). The daemon gives it to the app as ROBOT_DAEMON_TOKEN.
func (s *Guard) MintAppToken(app string) (token string, revoke func()) {
	token = rand.Text()
	sum := sha256.Sum256([]byte(token))
	s.appsMu.Lock()
	s.appTokens[sum] = app
	s.appsMu.Unlock()
	var once sync.Once
	return token, func() {
		once.Do(func() {
			s.appsMu.Lock()
			delete(s.appTokens, sum)
			s.appsMu.Unlock()
		})
	}
}

// Routes finds the route of a request: *http.ServeMux.
type Routes interface {
	http.Handler
	Handler(r *http.Request) (h http.Handler, pattern string)
}

// Handler wraps the API (routes) with the daemon's request checks, in order:
//
//  1. Host: only IP literals, localhost and the robot's own names are served, so that a web page
//     cannot reach the daemon through DNS rebinding.
//  2. Cross-site: state-changing requests from a browser page of another origin are refused
//     (Sec-Fetch-Site, else Origin against Host), so a web page cannot start apps on the robot.
//  3. Authentication of /api/ (docs/robot-api.md, "Authentication"): a connection to the owner
//     socket, whose peer the kernel named when it connected (OwnerListener); else the owner's
//     token as "Authorization: Bearer <token>" (or ?token= on a GET, for EventSource streams and
//     websockets), a running app's token, or the dashboard's login cookie. A request that a hub
//     delivers, or that a receiver relays, on some hub user's behalf (hubRelay) needs the owner's
//     token, even with --no-auth. Everything else is 401, answered before the body is read.
//  4. Scope: the route's scope (ScopeOf) must be one of the credential's, else 403 naming it.
func (s *Guard) Handler(routes Routes) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.log.Warn("refused a cross-site request", "method", r.Method, "path", r.URL.Path, "origin", r.Header.Get("Origin"))
		httpapi.WriteJSON(w, http.StatusForbidden, httpapi.Detail{Detail: "Cross-site requests are refused: state-changing calls must come from the dashboard or a non-browser client"})
	}))
	authenticated := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") {
			p, why := s.authenticate(r)
			if why != "" {
				s.log.Info("refused an unauthenticated request", "method", r.Method, "path", r.URL.Path, "peer", r.RemoteAddr, "why", why)
				// The body is never read: close the connection rather than drain it.
				w.Header().Set("Connection", "close")
				w.Header().Set("WWW-Authenticate", `Bearer realm="robot-daemon"`)
				httpapi.WriteJSON(w, http.StatusUnauthorized, httpapi.Detail{Detail: "Missing or invalid API token: " + why})
				// net/http drains a short unread body before it closes: a read deadline of now
				// ends that at once, for a client that sends the headers and never the body.
				_ = http.NewResponseController(w).SetReadDeadline(time.Now())
				return
			}
			_, pattern := routes.Handler(r)
			if need := ScopeOf(pattern); p.Scopes&need != need {
				s.log.Warn("refused a request outside its token's scope", "method", r.Method, "path", r.URL.Path, "principal", p.Name, "needs", need)
				w.Header().Set("Connection", "close")
				httpapi.WriteJSON(w, http.StatusForbidden, httpapi.Detail{Detail: "This credential (" + p.Name + ", by " + p.Via + ") lacks the scope \"" +
					need.String() + "\" that " + r.Method + " " + r.URL.Path + " needs; it has: " + p.Scopes.String() + ". A running app's token drives the robot and its media only; use the owner's token for the rest"})
				_ = http.NewResponseController(w).SetReadDeadline(time.Now())
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
		}
		httpapi.LimitBody(w, r, s.bodyTimeout)
		routes.ServeHTTP(w, r)
	})
	protected := cop.Handler(authenticated)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostAllowed(r.Host) {
			httpapi.WriteJSON(w, http.StatusMisdirectedRequest, httpapi.Detail{Detail: "Host " + r.Host + " is not served by this daemon; use the robot's IP address or add --allowed-host"})
			return
		}
		protected.ServeHTTP(w, r)
	})
}

// owner is the owner's principal, proven by via.
func owner(via string) Principal { return Principal{Name: "owner", Via: via, Scopes: OwnerScopes} }

// authenticate says who r acts for, or why it may not use the API.
func (s *Guard) authenticate(r *http.Request) (Principal, string) {
	got, hasToken := bearerToken(r)
	if via := hubRelay(r); via != "" {
		// The hub runs as some user of this machine (often the daemon's own, as in robothub dev),
		// but what it sends is written by whoever owns the webhook: neither its connection nor
		// --no-auth vouches for it. Only the owner's token, which a hub user does not have, lets
		// it in (a receiver's robot-update route sends it).
		if hasToken && !s.noAuth && subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) == 1 {
			return owner("token"), ""
		}
		return Principal{}, "a request " + via + " acts for a hub user, never for this machine's: it needs the daemon's token"
	}
	if c, ok := r.Context().Value(connKey{}).(*connInfo); ok && c.socketUID >= 0 {
		return owner("owner socket (uid " + strconv.Itoa(c.socketUID) + ")"), ""
	}
	if s.noAuth {
		return owner("--no-auth"), ""
	}
	if hasToken {
		if subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) == 1 {
			return owner("token"), ""
		}
		sum := sha256.Sum256([]byte(got))
		s.appsMu.RLock()
		app, ok := s.appTokens[sum]
		s.appsMu.RUnlock()
		if ok {
			return Principal{Name: "app " + app, Via: "its token", Scopes: AppScopes}, ""
		}
		return Principal{}, "the token sent is not this daemon's"
	}
	if c, err := r.Cookie(sessionCookie); err == nil && hmac.Equal([]byte(c.Value), []byte(s.sessionValue())) {
		return owner("login cookie"), ""
	}
	if crossSiteBrowser(r) {
		return Principal{}, "a request from another site's page needs the token"
	}
	return Principal{}, "send the daemon's token as Authorization: Bearer <token> (its owner reads it from <data-dir>/" + TokenFileName +
		", or calls through the unix socket <data-dir>/" + SocketFileName + "), or log in at /login"
}

func bearerToken(r *http.Request) (string, bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		got, ok := strings.CutPrefix(h, "Bearer ")
		if !ok {
			got = "" // another scheme: a credential, but never this daemon's token
		}
		return got, true
	}
	if r.Method == http.MethodGet && r.URL.Query().Has("token") {
		return r.URL.Query().Get("token"), true
	}
	return "", false
}

// hubRelay says how r came from a hub on a user's behalf ("" when it did not): the headers of a
// webhook delivery (the hub's X-Webhook-Secret, or any X-Webhook-* header), the local hub's user
// agent (internal/hubemu), or the user agent of a receiver's forward: route (internal/actions),
// which relays a delivery to a URL its configuration names.
func hubRelay(r *http.Request) string {
	ua := r.Header.Get("User-Agent")
	switch {
	case strings.HasPrefix(ua, "robothub-hubemu"):
		return "from the local hub (a webhook delivery)"
	case strings.HasPrefix(ua, "robothub-forward/"):
		return "relayed by a receiver's forward: route"
	}
	for name := range r.Header {
		if strings.HasPrefix(name, "X-Webhook-") {
			return "with the webhook header " + name + " (a hub delivery)"
		}
	}
	return ""
}

// crossSiteBrowser reports a request that a browser sent for a page of another origin.
func crossSiteBrowser(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return true
	case "same-origin", "none":
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	return strings.TrimPrefix(strings.TrimPrefix(origin, "http://"), "https://") != r.Host
}

// sessionCookie holds the dashboard's login: an HMAC of the token, so that the cookie is not the
// token itself and ends when the token changes.
const sessionCookie = "robot_daemon_session"

func (s *Guard) sessionValue() string {
	m := hmac.New(sha256.New, []byte(s.token))
	m.Write([]byte("robot-daemon dashboard session"))
	return hex.EncodeToString(m.Sum(nil))
}

// connKey holds a connection's *connInfo in its requests' context (see ConnContext).
type connKey struct{}

// connInfo is what the listener proved of a connection.
type connInfo struct {
	socketUID int // the owner socket's peer, as the kernel named it at connect; -1 for TCP
}

// ConnContext carries what the listeners proved of each connection (the owner socket's peer) into
// its requests: set it as the http.Server's ConnContext.
func (s *Guard) ConnContext(ctx context.Context, c net.Conn) context.Context {
	info := &connInfo{socketUID: -1}
	if oc, ok := c.(*ownerConn); ok {
		info.socketUID = oc.uid
		ctx = httpapi.WithLocalClient(ctx)
	}
	return context.WithValue(ctx, connKey{}, info)
}

func (s *Guard) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "" || net.ParseIP(host) != nil || host == "localhost" {
		return true
	}
	for _, h := range s.allowedHosts {
		if host == h {
			return true
		}
	}
	return false
}
