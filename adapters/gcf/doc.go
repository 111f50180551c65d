// Package gcf serves a webhook receiver (any http.Handler, normally a *webhook.Server) as a Google
// Cloud Function through github.com/GoogleCloudPlatform/functions-framework-go. Register it in an
// init under the function's entry point; Google's runtime (and funcframework locally) serves the
// function named by FUNCTION_TARGET at "/", so deliveries keep their /webhooks/<name> paths:
//
//	func init() {
//		srv := webhook.NewServer(webhook.WithLogger(gcf.NewLogger(os.Stderr, slog.LevelInfo)))
//		srv.Add("say-hello", sayHello)
//		gcf.Register("Webhooks", srv)
//	}
//
// NewLogger writes the JSON lines Cloud Logging reads a severity from.
package gcf
