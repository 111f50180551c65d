package actions

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/robothub/robothub/core/webhook"
)

// PublicURLEnv optionally names the address at which the hub reaches an env-configured receiver
// (a function URL, an API stage URL), so that its landing page shows routes at that address.
const PublicURLEnv = "ROBOTHUB_PUBLIC_URL"

// InsecureNoSecretEnv, set to 1 (or true), is --insecure-no-secret for receivers configured by
// environment: their exec, forward and robot-update routes are served without a secret.
const InsecureNoSecretEnv = "ROBOTHUB_INSECURE_NO_SECRET"

// NewServerFromEnv builds the receiver that deployments configured by environment serve (the Lambda
// function, the Cloud Function, a Space): the routes of ROBOTHUB_ROUTES, the secret of
// WEBHOOK_SECRET, the variables exec: commands get besides the usual ones of ROBOTHUB_EXEC_ENV, and
// the landing page address of ROBOTHUB_PUBLIC_URL. getenv is how the environment is read (os.Getenv
// in a main; also cfg.Getenv unless set); cfg.Logger, if set, is also the server's logger.
// opts come after those and may override them. Empty or malformed routes are an error that names
// the variable, so that a misconfigured function fails at start rather than on the first delivery.
func NewServerFromEnv(getenv func(string) string, cfg Config, opts ...webhook.Option) (*webhook.Server, error) {
	routes, err := ParseRoutes(getenv(RoutesEnv))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", RoutesEnv, err)
	}
	if len(routes) == 0 {
		return nil, fmt.Errorf("%s is empty: set it to the routes to serve, such as %s='hello=log;build=exec:make build'", RoutesEnv, RoutesEnv)
	}
	if v := strings.TrimSpace(getenv(InsecureNoSecretEnv)); v != "" {
		insecure, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: want 1 or 0 (true or false)", InsecureNoSecretEnv, v)
		}
		cfg.InsecureNoSecret = cfg.InsecureNoSecret || insecure
	}
	extra, err := ParseEnvNames(getenv(ExecEnvEnv))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ExecEnvEnv, err)
	}
	cfg.ExecEnv = append(cfg.ExecEnv, extra...)
	if cfg.Getenv == nil {
		cfg.Getenv = getenv
	}
	base := []webhook.Option{webhook.WithGetenv(getenv)}
	if cfg.Logger != nil {
		base = append(base, webhook.WithLogger(cfg.Logger))
	}
	srv := webhook.NewServer(append(base, opts...)...)
	if err := NewBuilder(cfg).Register(srv, routes); err != nil {
		return nil, fmt.Errorf("%s: %w", RoutesEnv, err)
	}
	if u := strings.TrimSpace(getenv(PublicURLEnv)); u != "" {
		srv.SetPublicURL(u)
	}
	return srv, nil
}
