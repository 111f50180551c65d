package lambda

import (
	"net/http"
	"strings"

	"github.com/akrylysov/algnhsa"

	"github.com/robothub/robothub/core/webhook"
)

// serveRouted hands r to the receiver with the path it routes on: without the configured base
// path, without an HTTP API stage, and without anything in front of /webhooks/.
func (a *adapter) serveRouted(w http.ResponseWriter, r *http.Request) {
	var stage string
	// Only HTTP API (v2) paths carry the stage: a REST API (v1) event's path starts after it.
	if ev, ok := algnhsa.APIGatewayV2RequestFromContext(r.Context()); ok {
		stage = ev.RequestContext.Stage
	}
	if p := routedPath(r.URL.Path, stage, a.basePath); p != r.URL.Path {
		r2 := new(http.Request)
		*r2 = *r
		u := *r.URL
		u.Path, u.RawPath = p, ""
		r2.URL = &u
		r = r2
	}
	a.next.ServeHTTP(w, r)
}

// routedPath removes from p, in this order of preference, the base path, the "/<stage>" of a
// named stage ("$default" has none in the path), or whatever precedes the first /webhooks/.
func routedPath(p, stage, basePath string) string {
	if rest, ok := cutSegments(p, basePath); ok {
		return rest
	}
	if stage != "" && stage != "$default" {
		if rest, ok := cutSegments(p, "/"+stage); ok {
			return rest
		}
	}
	if !strings.HasPrefix(p, webhook.RoutePrefix) {
		if i := strings.Index(p, webhook.RoutePrefix); i > 0 {
			return p[i:]
		}
	}
	return p
}

// cutSegments removes prefix from p when it is made of p's leading whole segments.
func cutSegments(p, prefix string) (string, bool) {
	if prefix == "" {
		return p, false
	}
	rest, ok := strings.CutPrefix(p, prefix)
	if !ok || rest != "" && rest[0] != '/' {
		return p, false
	}
	if rest == "" {
		rest = "/"
	}
	return rest, true
}
