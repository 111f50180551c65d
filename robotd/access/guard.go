// Package access is who may use the robot daemon, and how much: the API token (made on first
// start, checked for strength), the dashboard's login and its cookie, the loopback peer's user
// looked up in the kernel's socket table, host and cross-site checks, and the per-client caps on
// connections, streams and failed logins. robotd wraps its routes with Guard.Handler and serves
// on Guard.Listener; route handlers take stream slots through httpapi.Clients.
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
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/robothub/robothub/robotd/httpapi"
)

// Guard is the daemon's access control: the request checks of Handler, the connection caps of
// Listener, the per-client stream slots, and the dashboard's login.
type Guard struct {
	token        string // never empty: a request must present it unless noAuth
	noAuth       bool
	uid          int // the daemon's user: its loopback clients need no token
	allowedHosts []string
	bodyTimeout  time.Duration
	log          *slog.Logger
	streams      streamSlots
	logins       loginLimits
}

// Config holds what New needs.
type Config struct {
	Token        string        // the API token; empty: a random one nobody knows
	NoAuth       bool          // --no-auth: every client may use the API
	UID          int           // the daemon's user (os.Getuid())
	AllowedHosts []string      // host names served besides IP literals and localhost
	BodyTimeout  time.Duration // reading a request body; 0: httpapi.DefaultBodyTimeout
	Log          *slog.Logger
}

// New returns the access control cfg describes.
func New(cfg Config) *Guard {
	g := &Guard{token: cfg.Token, noAuth: cfg.NoAuth, uid: cfg.UID, allowedHosts: cfg.AllowedHosts,
		bodyTimeout: cfg.BodyTimeout, log: cfg.Log}
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

// Handler wraps the API with the daemon's request checks, in order:
//
//  1. Host: only IP literals, localhost and the robot's own names are served, so that a web page
//     cannot reach the daemon through DNS rebinding.
//  2. Cross-site: state-changing requests from a browser page of another origin are refused
//     (Sec-Fetch-Site, else Origin against Host), so a web page cannot start apps on the robot.
//  3. Authentication of /api/ (docs/robot-api.md, "Authentication"): the daemon's token as
//     "Authorization: Bearer <token>" (or ?token= on a GET, for EventSource streams and websockets),
//     or the dashboard's login cookie; without either, a client on loopback whose process runs as
//     the daemon's own user (or root, who can read the token file anyway). A request that a hub
//     delivers, or that a receiver relays, on some hub user's behalf (hubRelay) is never such a
//     client: it needs the token, even with --no-auth. Everything else is 401, answered before
//     the body is read.
func (s *Guard) Handler(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.log.Warn("refused a cross-site request", "method", r.Method, "path", r.URL.Path, "origin", r.Header.Get("Origin"))
		httpapi.WriteJSON(w, http.StatusForbidden, httpapi.Detail{Detail: "Cross-site requests are refused: state-changing calls must come from the dashboard or a non-browser client"})
	}))
	authenticated := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") {
			if why := s.refusal(r); why != "" {
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
		}
		httpapi.LimitBody(w, r, s.bodyTimeout)
		next.ServeHTTP(w, r)
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

// refusal says why r may not use the API, or "" when it may.
func (s *Guard) refusal(r *http.Request) string {
	if via := hubRelay(r); via != "" {
		// The hub runs as some user of this machine (often the daemon's own, as in robothub dev),
		// but what it sends is written by whoever owns the webhook: neither its uid nor --no-auth
		// vouches for it. Only the token, which a hub user does not have, lets it in.
		got, ok := bearerToken(r)
		if ok && !s.noAuth && subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) == 1 {
			return ""
		}
		return "a request " + via + " acts for a hub user, never for this machine's: it needs the daemon's token"
	}
	if s.noAuth {
		return ""
	}
	if got, ok := bearerToken(r); ok {
		if subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) == 1 {
			return ""
		}
		return "the token sent is not this daemon's"
	}
	if c, err := r.Cookie(sessionCookie); err == nil && hmac.Equal([]byte(c.Value), []byte(s.sessionValue())) {
		return ""
	}
	// A browser page of another site runs in the user's own browser, on this machine as the same
	// user: the peer's user vouches for non-browser clients and same-origin pages only.
	if crossSiteBrowser(r) {
		return "a request from another site's page needs the token"
	}
	switch uid := s.peerUID(r); {
	case uid < 0:
		return "send it as Authorization: Bearer <token>, or log in at /login"
	case uid == s.uid || uid == 0:
		return ""
	default:
		return "the client runs as another user (uid " + strconv.Itoa(uid) + ") than the daemon"
	}
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

// peerKey holds the connection's *peer in a request's context (see ConnContext).
type peerKey struct{}

// peer is a connection's client, whose user is looked up once, when first needed.
type peer struct {
	remote, local net.Addr
	once          sync.Once
	uid           int
}

// ConnContext remembers each connection, so that the client's user is looked up once per
// connection (when Listener accepted it, or at its first request): set it as the http.Server's
// ConnContext.
func (s *Guard) ConnContext(ctx context.Context, c net.Conn) context.Context {
	p := &peer{remote: c.RemoteAddr(), local: c.LocalAddr()}
	if pc, ok := c.(*peerConn); ok {
		p.once.Do(func() { p.uid = pc.uid })
	}
	return context.WithValue(ctx, peerKey{}, p)
}

// peerUID is the uid of the loopback client of r, or -1 when it is not known (another machine,
// another OS, or the connection is gone).
func (s *Guard) peerUID(r *http.Request) int {
	p, _ := r.Context().Value(peerKey{}).(*peer)
	if p == nil {
		local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		p = &peer{local: local}
		if ra, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
			p.remote = net.TCPAddrFromAddrPort(ra)
		}
	}
	p.once.Do(func() { p.uid = lookupPeerUID(p.remote, p.local) })
	return p.uid
}

func lookupPeerUID(remote, local net.Addr) int {
	ra, ok1 := remote.(*net.TCPAddr)
	la, ok2 := local.(*net.TCPAddr)
	if !ok1 || !ok2 || !ra.IP.IsLoopback() {
		return -1
	}
	uid, err := loopbackPeerUID(ra.AddrPort(), la.AddrPort())
	if err != nil {
		return -1
	}
	return uid
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
