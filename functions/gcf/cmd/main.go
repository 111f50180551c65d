// Command cmd runs the robothub Cloud Function locally the way Google's runtime runs it: through
// the Functions Framework with FUNCTION_TARGET=RobothubWebhooks, on 127.0.0.1:$PORT (8080 by
// default; HOST=0.0.0.0 to listen on every interface).
//
//	ROBOTHUB_ROUTES='hello=log' WEBHOOK_SECRET=s3cret go run ./functions/gcf/cmd
package main

import (
	"log/slog"
	"os"

	"github.com/GoogleCloudPlatform/functions-framework-go/funcframework"

	gcfadapter "github.com/robothub/robothub/adapters/gcf"
	"github.com/robothub/robothub/functions/gcf"
)

func main() {
	if os.Getenv("FUNCTION_TARGET") == "" {
		os.Setenv("FUNCTION_TARGET", gcf.EntryPoint)
	}
	host, port := os.Getenv("HOST"), os.Getenv("PORT")
	if host == "" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "8080"
	}
	log := gcfadapter.NewLogger(os.Stderr, slog.LevelInfo)
	log.Info("serving the function", "target", os.Getenv("FUNCTION_TARGET"), "url", "http://"+host+":"+port+"/")
	if err := funcframework.StartHostPort(host, port); err != nil {
		log.Error("funcframework stopped: "+err.Error(), "err", err.Error())
		os.Exit(1)
	}
}
