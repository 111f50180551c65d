// Package webhook is the transport-agnostic webhook receiver: the hub's v3 payload model and its
// parser, secret verification, and Server, an http.Handler with one POST route per registered
// handler under /webhooks/, a landing page and a readiness probe.
//
// Adapters serve a Server over net/http (adapters/nethttp), AWS Lambda (adapters/lambda) or Google
// Cloud Functions (adapters/gcf) without changing the handlers.
//
// Status codes of a webhook route:
//
//	404 no handler at that path        405 not POST (Allow: POST)
//	401 secret required but absent     403 wrong secret
//	413 body over the size cap         400 body is not JSON
//	422 JSON that is not a payload     500 handler error or panic
//	503 handler timed out              200 handler result
//
// A handler error of a core/fault kind gets that kind's status instead of 500 (statusOf).
package webhook
