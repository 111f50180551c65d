package fleet

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net/url"
)

// A receiver's fleet route announces through a Link it opens by the scheme of its URL: an MQTT
// broker (mqtt, mqtts, ws, wss: adapters/mqtt) or AWS IoT Core's data plane (awsiot:
// adapters/awsiot). Each binary registers the dialers it serves (internal/actions' FleetDialers),
// so that it links only those: the Lambda carries no MQTT client.

// Dialer opens the link of one fleet route.
type Dialer func(ctx context.Context, req LinkRequest) (Link, error)

// LinkRequest is a fleet route's link to open, with the receiver's credentials for it.
type LinkRequest struct {
	Target             *url.URL
	Username, Password string
	// TLS, when set, is the link's TLS; otherwise CAFile (the CAs to trust; empty: the system's),
	// CertFile and KeyFile (a client certificate) say it, or the dialer's defaults do.
	TLS                       *tls.Config
	CAFile, CertFile, KeyFile string
	Logger                    *slog.Logger
	// Statuses, for a rollout in canary waves, is the publisher the link delivers the robots'
	// statuses to (its Handle, Filters and Subscribed), from every (re)connection on; nil when the
	// route has no waves. A dialer whose link can only publish refuses it.
	Statuses *Publisher
}
