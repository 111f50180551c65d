// Command bootstrap is robothub's webhook receiver as an AWS Lambda function, for the
// provided.al2023 runtime on arm64 or x86_64. It serves the receiver of `robothub serve`,
// configured by the function's environment, so a user deploys it without writing Go:
//
//	ROBOTHUB_ROUTES     routes and actions: hello=log;relay=forward:https://...;build=exec:./build.sh
//	WEBHOOK_SECRET      the secret the hub's webhook is configured with (empty: log routes are open,
//	                    other routes refuse to start unless ROBOTHUB_INSECURE_NO_SECRET=1)
//	ROBOTHUB_BASE_PATH  the base path of a custom domain in front of the routes, if any
//	ROBOTHUB_PUBLIC_URL the function's URL, shown on the landing page, if wanted
//	AWS_LAMBDA_LOG_LEVEL set by Lambda's logging controls: the level of the JSON logs
//
// The exec action (exec:COMMAND ARGS...) is left out of the default build: it needs a program
// added to the zip (provided.al2023 has a minimal userland), and its shell parser is 0.48 MB of the
// binary, which holds the bootstrap to 1.3x the size of the smallest aws-lambda-go function
// (docs/BENCHMARKS.md, issue 31). Build it in with -tags lambda.norpc,robothub.exec (make
// lambda-zip LAMBDA_EXEC=1); without it, an exec: route stops the function at start, saying so.
// So is the robot-update action (robot-update:DAEMON_URL), whose robot daemon client is 0.1 MB: a
// Lambda rarely reaches a robot's daemon, and reaches robots through fleet:awsiot:// routes. Build
// it in with -tags lambda.norpc,robothub.robotupdate (make lambda-zip LAMBDA_ROBOT_UPDATE=1).
//
// It is also the shortest example of deploying one's own Go handlers: replace the receiver built
// here with a webhook.Server that has them. Build it with
//
//	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o bootstrap ./functions/lambda
package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strconv"

	"github.com/robothub/robothub/adapters/awsiot"
	lambdaadapter "github.com/robothub/robothub/adapters/lambda"
	"github.com/robothub/robothub/core/fleet"
	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/actions"
)

// splitCommand is the exec action's, when built with it (exec.go).
var splitCommand func(string) ([]string, error)

// robotUpdate is actions.RobotUpdate in a bootstrap built with -tags robothub.robotupdate
// (robotupdate.go), else nil.
var robotUpdate func(*actions.Builder, string, string) (webhook.HandlerFunc, error)

// BasePathEnv names the custom-domain base path to remove before routing.
const BasePathEnv = "ROBOTHUB_BASE_PATH"

func main() {
	if singleInvocation(os.Getenv) {
		// A Lambda execution environment serves one invocation at a time; a second P only adds
		// goroutine wake-ups (futex calls) to each one: 30 to 60% more CPU per invoke, measured
		// in docs/BENCHMARKS.md.
		runtime.GOMAXPROCS(1)
	}
	srv, opts, err := configure(os.Getenv, os.Stdout, os.Stderr)
	if err != nil {
		os.Exit(1) // configure logged why; Lambda reports the exit as an init error
	}
	lambdaadapter.Start(srv, opts...)
}

// singleInvocation reports whether the function serves one invocation at a time and leaves the
// choice of GOMAXPROCS to this program: not on Lambda Managed Instances, where
// AWS_LAMBDA_MAX_CONCURRENCY allows several, and not when GOMAXPROCS is set.
func singleInvocation(getenv func(string) string) bool {
	if getenv("GOMAXPROCS") != "" {
		return false
	}
	n, err := strconv.Atoi(getenv("AWS_LAMBDA_MAX_CONCURRENCY"))
	return err != nil || n <= 1
}

// configure builds the receiver from the environment. Its logs are JSON lines on stderr; the log
// action prints deliveries on stdout. Both go to CloudWatch Logs.
func configure(getenv func(string) string, stdout, stderr io.Writer) (*webhook.Server, []lambdaadapter.Option, error) {
	logger := lambdaadapter.NewLogger(stderr, getenv)
	// aws-lambda-go reports failed invocations through the log package: keep every line JSON.
	slog.SetDefault(logger)
	// An execution environment is frozen between invocations: no canary waves (they need a
	// process that stays up), and fleet:awsiot://ENDPOINT publishes through AWS IoT Core's data
	// plane with the execution role's credentials.
	// Only that link is registered: the bootstrap links no MQTT client.
	srv, err := actions.NewServerFromEnv(getenv, actions.Config{Logger: logger, Output: stdout, Ephemeral: true,
		FleetDialers: map[string]fleet.Dialer{"awsiot": awsiot.FleetDialer(getenv)}, SplitCommand: splitCommand, RobotUpdate: robotUpdate})
	switch {
	case errors.Is(err, actions.ErrNoExec):
		err = fmt.Errorf("%w: rebuild the bootstrap with -tags lambda.norpc,robothub.exec (make lambda-zip LAMBDA_EXEC=1)", err)
	case errors.Is(err, actions.ErrNoRobotUpdate):
		err = fmt.Errorf("%w: rebuild the bootstrap with -tags lambda.norpc,robothub.robotupdate (make lambda-zip LAMBDA_ROBOT_UPDATE=1)", err)
	}
	if err != nil {
		logger.Error("the webhook receiver is not configured: "+err.Error(), "err", err.Error())
		return nil, nil, err
	}
	return srv, []lambdaadapter.Option{lambdaadapter.WithBasePath(getenv(BasePathEnv))}, nil
}
