package robotd_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/badinput"
)

// TestBadInputDaemonAttacks tries the attacks of the daemon's threat model (docs/RELIABILITY.md)
// against the real server: another local user (setpriv to nobody, running curl), the daemon's own
// user without a token, a running app's token, a web page in the user's own browser (the headers
// Chromium sends), a client that stalls or floods. Its table is the "daemon-attacks" section of
// docs/RELIABILITY.md.
func TestBadInputDaemonAttacks(t *testing.T) {
	needOtherUser(t)
	const token = "attack-table-token-0123456789"
	d := startServer(t, serverOptions{token: token, bodyTimeout: time.Second})
	d.install("coop_app")
	addr := strings.TrimPrefix(d.url, "http://")
	table := badinput.NewTable("daemon-attacks", "go test -run TestBadInputDaemonAttacks ./robotd (as root: the other user is nobody through setpriv)")
	table.Scrub(d.url, "http://127.0.0.1:PORT")
	table.Scrub(addr, "127.0.0.1:PORT")
	table.ScrubPattern(`uid [0-9]+\)`, "uid N)")
	table.Scrub(token, "TOKEN")
	appToken, revoke := d.server.MintAppToken("coop_app")
	defer revoke()
	table.Scrub(appToken, "APP_TOKEN")
	table.ScrubPattern(`robot_daemon_session=[0-9a-f]{64}`, "robot_daemon_session=<the login cookie>")

	message := func(body string) string {
		var dt detail
		if json.Unmarshal([]byte(body), &dt) == nil && dt.Detail != "" {
			return dt.Detail
		}
		line, _, _ := strings.Cut(strings.TrimSpace(body), "\n")
		return line
	}
	add := func(input, request string, expected, observed int, answer string) {
		t.Helper()
		if observed == 200 {
			answer = "(served)" // the answer itself changes from run to run
		}
		table.Add(badinput.Row{Input: input, Request: request, Expected: expected, Observed: observed, Answer: answer})
		if observed != expected {
			t.Errorf("%s: %s: %d %s, want %d", input, request, observed, answer, expected)
		}
	}
	nobody := func(input, method, path, body string, expected int, headers ...string) {
		t.Helper()
		code, out := asNobody(t, method, d.url+path, body, headers...)
		shown := "nobody: " + method + " " + path + " " + body
		for i := 0; i+1 < len(headers); i += 2 {
			shown += " (" + headers[i] + ": " + headers[i+1] + ")"
		}
		add(input, shown, expected, code, message(out))
	}

	// Another local user, without the daemon's token: nothing that installs, runs or moves.
	coop := `{"url":"` + testdataApp("coop_app") + `"}`
	table.Scrub(testdataApp("coop_app"), "/path/to/coop_app")
	nobody("another local user installs an app", "POST", "/api/apps/install", coop, 401)
	nobody("another local user starts an app", "POST", "/api/apps/start-app/coop_app", "", 401)
	nobody("another local user moves the head", "POST", "/api/move/goto", `{"head_pose":{"yaw":0.5},"duration":1}`, 401)
	nobody("another local user switches the motors off", "POST", "/api/motors/set_mode/disabled", "", 401)
	nobody("another local user opens an SDK session", "POST", "/api/sessions", `{"client":"intruder"}`, 401)
	nobody("another local user reads the camera", "GET", "/api/camera/frame", "", 401)
	nobody("another local user with a wrong token", "POST", "/api/apps/start-app/coop_app", "", 401, "Authorization", "Bearer guessed")
	nobody("another local user with a forged login cookie", "GET", "/api/apps/list", "", 401, "Cookie", "robot_daemon_session=forged")
	nobody("another local user with the token (allowed)", "POST", "/api/move/play/wake_up", "", 200, "Authorization", "Bearer "+token)
	nobody("another local user logs in with a wrong token", "GET", "/login?token=guessed", "", 401)
	// GET /login?token=<the token> is the allowed login: its cookie then opens the API.
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(d.url + "/login?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookie := regexp.MustCompile(`^[^;]+`).FindString(resp.Header.Get("Set-Cookie"))
	nobody("another local user with the login cookie (allowed)", "GET", "/api/apps/list", "", 200, "Cookie", cookie, "Sec-Fetch-Site", "same-origin")

	// The daemon's own user over TCP, without a token: no identity comes from a connection (its
	// convenience is the owner socket), and a connection's peer is never looked up.
	raw := func(input string, req badinput.Request, expected int) {
		t.Helper()
		a, err := badinput.Send(addr, req)
		if err != nil {
			t.Fatalf("%s: %v", input, err)
		}
		add(input, req.Method+" "+req.Target+" "+string(req.Body), expected, a.Status, a.Message())
	}
	raw("the daemon's own user on loopback without the token", badinput.Request{Method: "POST", Target: "/api/move/play/wake_up"}, 401)
	bearer := func(tok string) [][2]string {
		return [][2]string{{"Authorization", "Bearer " + tok}, {"Content-Type", "application/json"}}
	}
	// A running app's token (minted at its start): the robot and its media, nothing else.
	raw("a running app's token installs an app", badinput.Request{Method: "POST", Target: "/api/apps/install", Header: bearer(appToken), Body: []byte(coop)}, 403)
	raw("a running app's token removes an app", badinput.Request{Method: "POST", Target: "/api/apps/remove/coop_app", Header: bearer(appToken)}, 403)
	raw("a running app's token renames the robot", badinput.Request{Method: "POST", Target: "/api/daemon/robot-name", Header: bearer(appToken), Body: []byte(`{"name":"x"}`)}, 403)
	raw("a running app's token saves a hub token", badinput.Request{Method: "POST", Target: "/api/hf-auth/save-token", Header: bearer(appToken), Body: []byte(`{"token":"hf_x"}`)}, 403)
	raw("a running app's token moves the head (allowed)", badinput.Request{Method: "POST", Target: "/api/move/goto", Header: bearer(appToken), Body: []byte(`{"antennas":[0.1,0.1],"duration":0.1}`)}, 200)
	raw("a running app's token reads the camera (allowed)", badinput.Request{Method: "GET", Target: "/api/camera/specs", Header: bearer(appToken)}, 200)

	// A page of another site in the browser of the daemon's own user.
	chromium := func(mode, dest string) [][2]string {
		return [][2]string{{"Origin", "https://evil.example"}, {"Sec-Fetch-Site", "cross-site"}, {"Sec-Fetch-Mode", mode},
			{"Sec-Fetch-Dest", dest}, {"Referer", "https://evil.example/"}, {"Content-Type", "text/plain;charset=UTF-8"}}
	}
	raw("a cross-site page's fetch() starts an app", badinput.Request{Method: "POST", Target: "/api/apps/start-app/coop_app", Header: chromium("no-cors", "empty"), Body: []byte("{}")}, 403)
	raw("a cross-site page's form installs an app", badinput.Request{Method: "POST", Target: "/api/apps/install", Header: chromium("navigate", "document"), Body: []byte(coop)}, 403)
	raw("a cross-site page reads the state", badinput.Request{Method: "GET", Target: "/api/state/full", Header: chromium("cors", "empty")}, 401)
	raw("a cross-site page's <img> of the camera", badinput.Request{Method: "GET", Target: "/api/camera/frame?format=jpeg", Header: chromium("no-cors", "image")}, 401)
	raw("DNS rebinding: a page served from evil.example", badinput.Request{Method: "POST", Target: "/api/apps/start-app/coop_app", Header: [][2]string{{"Host", "evil.example:8000"}}}, 421)

	// What the hub sends on a hub user's behalf, on loopback from the daemon's own user (issue 20).
	delivery := `{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"model","name":"bob/x"}}`
	raw("the local hub delivers a webhook to goto_sleep", badinput.Request{Method: "POST", Target: "/api/move/play/goto_sleep",
		Header: [][2]string{{"Content-Type", "application/json"}, {"User-Agent", "robothub-hubemu"}, {"X-Webhook-Secret", "bobs-secret"}}, Body: []byte(delivery)}, 401)
	raw("a receiver's forward: route relays a delivery to remove an app", badinput.Request{Method: "POST", Target: "/api/apps/remove/coop_app",
		Header: [][2]string{{"Content-Type", "application/json"}, {"User-Agent", "robothub-forward/dev"}}, Body: []byte(delivery)}, 401)
	form := [][2]string{{"Content-Type", "application/x-www-form-urlencoded"}}
	// Failed logins are counted per address (nothing else names a client that has no credential):
	// nobody's wrong login above was loopback's first of five.
	for i := range 4 {
		if a, err := badinput.Send(addr, badinput.Request{Method: "POST", Target: "/login", Header: form, Body: []byte(fmt.Sprintf("token=guess%d", i))}); err != nil || a.Status != 401 {
			t.Fatalf("wrong login %d: %v %+v", i+1, err, a)
		}
	}
	raw("a sixth wrong token at /login within seconds", badinput.Request{Method: "POST", Target: "/login", Header: form, Body: []byte("token=guess6")}, 429)

	// Clients that hold resources.
	raw("a wrong token with a 10 MiB body that never comes", badinput.Request{Method: "POST", Target: "/api/apps/install",
		Header: [][2]string{{"Authorization", "Bearer guessed"}, {"Content-Length", fmt.Sprint(10 << 20)}}}, 401)
	raw("headers, then a body that stops (body timeout 1 s)", badinput.Request{Method: "POST", Target: "/api/move/goto",
		Header: [][2]string{{"Authorization", "Bearer " + token}, {"Content-Length", "100"}}, Body: []byte(`{"duration"`)}, 408)
	var streams []*http.Response
	defer func() {
		for _, s := range streams {
			s.Body.Close()
		}
	}()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for len(streams) < 16 {
		r, err := client.Get(d.url + "/api/state/stream?frequency=1&token=" + token)
		if err != nil || r.StatusCode != 200 {
			t.Fatalf("stream %d: %v %v", len(streams)+1, err, r)
		}
		streams = append(streams, r)
	}
	raw("a 17th state stream from one client", badinput.Request{Method: "GET", Target: "/api/state/stream?frequency=50", Header: [][2]string{{"Authorization", "Bearer " + token}}}, 429)

	if st := d.status(); st != nil {
		t.Errorf("an app runs after the attacks: %+v", st)
	}
	table.Finish(t, true)
}
