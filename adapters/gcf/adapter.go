package gcf

import (
	"net/http"
	"os"
	"strings"

	"github.com/GoogleCloudPlatform/functions-framework-go/functions"

	"github.com/robothub/robothub/core/webhook"
)

// Register registers h with the Functions Framework as the HTTP function named entryPoint (the
// --entry-point of gcloud functions deploy, the FUNCTION_TARGET of funcframework). Call it from an
// init function. Requests that arrive under a /<entryPoint> or /<service> prefix (K_SERVICE, the
// deployed function's name) are routed without it.
func Register(entryPoint string, h http.Handler) {
	functions.HTTP(entryPoint, Handler(h, entryPoint, os.Getenv("K_SERVICE")).ServeHTTP)
}

// Handler returns h behind the path handling of a Cloud Function: a leading /<name> segment, for
// any of names, is removed, and so is anything in front of /webhooks/. A function served at "/"
// gets its paths unchanged.
func Handler(h http.Handler, names ...string) http.Handler {
	var prefixes []string
	for _, n := range names {
		if n = strings.Trim(n, "/"); n != "" {
			prefixes = append(prefixes, "/"+n)
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := routedPath(r.URL.Path, prefixes); p != r.URL.Path {
			r2 := new(http.Request)
			*r2 = *r
			u := *r.URL
			u.Path, u.RawPath = p, ""
			r2.URL = &u
			r = r2
		}
		h.ServeHTTP(w, r)
	})
}

// routedPath is p without the first of prefixes it starts with (as whole segments), or else
// without whatever precedes its first /webhooks/.
func routedPath(p string, prefixes []string) string {
	if strings.HasPrefix(p, webhook.RoutePrefix) {
		return p
	}
	for _, pre := range prefixes {
		if rest, ok := strings.CutPrefix(p, pre); ok && (rest == "" || rest[0] == '/') {
			if rest == "" {
				return "/"
			}
			return rest
		}
	}
	if i := strings.Index(p, webhook.RoutePrefix); i > 0 {
		return p[i:]
	}
	return p
}
