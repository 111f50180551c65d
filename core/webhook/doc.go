// Package webhook is the webhook receiver: the hub's v3 payload model and its parser, secret
// verification, and Server, an http.Handler with one POST route per registered handler under
// /webhooks/, a landing page and a readiness probe.
//
// It is the one core package that speaks HTTP, because the receiver's contract is HTTP: the hub
// delivers a POST and reads the status and JSON answer (the 401 and 403 texts are the public hub's
// own). Every transport hands Server an *http.Request: adapters/nethttp serves it directly, and the
// Lambda (adapters/lambda) and Cloud Functions (adapters/gcf) adapters turn their events into
// requests. So Server is the receiver's HTTP transport: its statuses are decided here, in
// status.go (statusOf), from the one table of every server (core/fault/httpstatus), rather than
// in each adapter, where three copies would drift apart. The rest of core keeps kinds only.
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
