package lambda

import "strings"

// Option configures the adapter.
type Option func(*adapter)

// WithBasePath names a path prefix to remove before routing, such as the base path mapping of a
// custom domain ("/hooks" for https://api.example.com/hooks/webhooks/say-hello). Without it the
// adapter removes an HTTP API stage ("/prod/...") and anything in front of "/webhooks/", which
// covers webhook deliveries; the base path makes the landing page and /healthz reachable too.
func WithBasePath(prefix string) Option {
	return func(a *adapter) {
		a.basePath = "/" + strings.Trim(prefix, "/")
		if a.basePath == "/" {
			a.basePath = ""
		}
	}
}
