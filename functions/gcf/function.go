// Package gcf is robothub's webhook receiver as a Google Cloud Function (entry point
// RobothubWebhooks). It serves the receiver of `robothub serve`, configured by the function's
// environment, so a user deploys it without writing Go:
//
//	ROBOTHUB_ROUTES     routes and actions: hello=log;build=exec:make build;relay=forward:https://...
//	WEBHOOK_SECRET      the secret of the hub webhook, from Secret Manager (--set-secrets)
//	ROBOTHUB_PUBLIC_URL the function's URL, shown on the landing page, if wanted
//	LOG_LEVEL           DEBUG, INFO (the default), WARN or ERROR
//
// deploy/gcp/deploy.sh deploys it with gcloud functions deploy --gen2; cmd/ runs it locally. It is
// also the shortest example of deploying one's own Go handlers: register a webhook.Server that
// has them instead.
package gcf

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"

	gcfadapter "github.com/robothub/robothub/adapters/gcf"
	"github.com/robothub/robothub/adapters/mqtt"
	"github.com/robothub/robothub/internal/actions"
)

// EntryPoint is the function's name for the Functions Framework: gcloud's --entry-point and
// funcframework's FUNCTION_TARGET.
const EntryPoint = "RobothubWebhooks"

// LogLevelEnv sets the level of the function's logs.
const LogLevelEnv = "LOG_LEVEL"

func init() {
	// The receiver is built on the first request, from the environment the function has then;
	// nothing is done at init but this registration.
	var once sync.Once
	var h http.Handler
	gcfadapter.Register(EntryPoint, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { h = NewHandler(os.Getenv, os.Stdout, os.Stderr) })
		h.ServeHTTP(w, r)
	}))
}

// NewHandler builds the env-configured receiver. Its logs are Cloud Logging JSON lines on stderr;
// the log action prints deliveries on stdout. A configuration error is logged once and then is
// the answer to every request (500, naming the variable to fix), so that it shows where the
// function's user looks.
func NewHandler(getenv func(string) string, stdout, stderr io.Writer) http.Handler {
	logger := gcfadapter.NewLogger(stderr, logLevel(getenv(LogLevelEnv)))
	// An instance may be throttled between requests: no canary waves (they need a process that stays up).
	srv, err := actions.NewServerFromEnv(getenv, actions.Config{Logger: logger, Output: stdout, Ephemeral: true, FleetDialers: mqtt.FleetDialers(),
		SplitCommand: actions.SplitCommand, RobotUpdate: actions.RobotUpdate})
	if err != nil {
		msg := "the webhook receiver is not configured: " + err.Error()
		logger.Error(msg)
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
		})
	}
	return srv
}

func logLevel(s string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(strings.TrimSpace(s)))); err != nil {
		return slog.LevelInfo
	}
	return l
}
