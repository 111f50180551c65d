package webhook

import (
	"bytes"
	"cmp"
	"net/http"
	"strings"
)

// The landing page is written by hand rather than by html/template: html/template (through
// text/template's reflect.Value.MethodByName) makes the linker keep every exported method of every
// type the program links, which made the Lambda bootstrap 2.1 MB bigger (10.83 MB against 8.68 MB,
// stripped, linux/amd64), and it parsed the template at every start (docs/BENCHMARKS.md, issue
// 31). Every value on the page is in HTML text (no attribute, script or URL), where html/template
// escapes as htmlEscaper does; TestLandingMatchesTemplate checks the page against
// testdata/landing.html.tmpl, the template it was, executed by html/template.

// htmlEscaper escapes a value in HTML text as html/template does there (its htmlReplacementTable:
// NUL becomes U+FFFD, and + is escaped too).
var htmlEscaper = strings.NewReplacer("\x00", "\uFFFD", `"`, "&#34;", "&", "&amp;", "'", "&#39;", "+", "&#43;", "<", "&lt;", ">", "&gt;")

type landingData struct {
	Routes    []Route
	SecretSet bool
	Base      string // where the hub should send deliveries
	Local     bool   // Base is a loopback or private address the hub cannot reach
	Example   string // a route URL for the examples
}

// render writes the landing page of d to buf.
func (d landingData) render(buf *bytes.Buffer) {
	esc := func(s string) { _, _ = htmlEscaper.WriteString(buf, s) }
	buf.WriteString(landingHead)
	if len(d.Routes) > 0 {
		buf.WriteString("\n<table id=\"routes\">\n  <thead><tr><th>Name</th><th>URL (POST)</th></tr></thead>\n  <tbody>\n  ")
		for _, r := range d.Routes {
			buf.WriteString("<tr class=\"route\"><td>")
			esc(r.Name)
			buf.WriteString("</td><td><code class=\"route-url\">")
			esc(d.Base)
			esc(r.Path)
			buf.WriteString("</code></td></tr>\n  ")
		}
		buf.WriteString("\n  </tbody>\n</table>\n")
	} else {
		buf.WriteString("\n<p id=\"no-routes\">No handler is registered yet. Register one, then restart the server.</p>\n")
	}
	buf.WriteString("\n\n<h2>Secret</h2>\n")
	if d.SecretSet {
		buf.WriteString("\n<p id=\"secret-status\" class=\"ok\">A secret is set. Every request must carry it in the <code>X-Webhook-Secret</code>\nheader (or as <code>?secret=</code> in the URL); others get 401 or 403.</p>\n")
	} else {
		buf.WriteString("\n<p id=\"secret-status\" class=\"warn\">No secret is set: every route accepts requests from anyone.\nSet <code>WEBHOOK_SECRET</code> before starting the server, and give the same value to the hub webhook.</p>\n")
	}
	buf.WriteString("\n\n<h2>Point a hub webhook here</h2>\n")
	if d.Local {
		buf.WriteString("\n<p class=\"warn\">")
		esc(d.Base)
		buf.WriteString(" is a local address that the hub cannot reach. Start the server with a public tunnel\n(<code>robothub serve --tunnel ngrok</code> or <code>--tunnel-command</code>) and use the public URL it prints.</p>\n")
	}
	buf.WriteString(landingSteps)
	esc(d.Example)
	buf.WriteString(" --watch model:your-name/your-model --domain repo --secret \"$WEBHOOK_SECRET\"</pre></li>\n  <li>Try a route by hand:\n<pre>curl -X POST ")
	esc(d.Example)
	buf.WriteString(landingTail)
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
	d.render(&buf)
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

// The page's fixed text, between the values.
const landingHead = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Webhook receiver</title>
<style>
  body { font: 15px/1.5 system-ui, sans-serif; max-width: 52rem; margin: 2rem auto; padding: 0 1rem; color: #1f2328; }
  h1 { font-size: 1.5rem; }
  code, pre { font: 13px ui-monospace, monospace; background: #f4f5f7; border-radius: 4px; }
  code { padding: 0 .25rem; }
  pre { padding: .75rem; overflow-x: auto; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid #d8dee4; }
  .ok { color: #1a7f37; } .warn { color: #9a6700; font-weight: 600; }
</style>
</head>
<body>
<h1>Webhook receiver</h1>

<h2>Routes</h2>
`

const landingSteps = `
<ol>
  <li>In the hub's webhook settings, create a webhook with the target URL of a route above, choose the repositories,
      users or organizations to watch, and the domains (repo, discussion).</li>
  <li>Set the webhook's secret to the value of <code>WEBHOOK_SECRET</code>.</li>
  <li>Or do both from a terminal:
<pre>robothub webhooks create --url `

const landingTail = ` -H 'Content-Type: application/json' -H "X-Webhook-Secret: $WEBHOOK_SECRET" \
  -d '{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"model","name":"your-name/your-model"}}'</pre></li>
</ol>
<p>When the public address changes (a new tunnel, a restart), update the webhook's URL on the hub:
<code>robothub webhooks update &lt;webhook_id&gt; --url &lt;new URL&gt;</code>.</p>
</body>
</html>
`
