package actions

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/robothub/robothub/core/webhook"
)

// ExecEnvEnv lists, for receivers configured by environment (Lambda, Cloud Functions, a Space),
// the names of further variables that exec: commands get (--exec-env of robothub serve): separated
// by commas or spaces, such as ROBOTHUB_EXEC_ENV="OPENAI_API_KEY,CI_TOKEN".
const ExecEnvEnv = "ROBOTHUB_EXEC_ENV"

// execEnvBase is the environment an exec: command gets from the receiver's own, besides the
// WEBHOOK_ variables that describe the delivery: what programs need to run (where programs are,
// whose home, the locale, the time zone, where temporary files go; on Windows, the system's
// directories and the executable extensions), and no credentials. A receiver's environment holds
// its secrets (HF_TOKEN, a cloud's keys: AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN on Lambda, the
// daemon's token), and a command a delivery runs needs none of them unless the operator says so
// with --exec-env NAME.
var execEnvBase = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ",
	"LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_MONETARY", "LC_NUMERIC", "LC_TIME",
	"SystemRoot", "SystemDrive", "windir", "ComSpec", "PATHEXT", "TEMP", "TMP", "USERPROFILE",
}

// envName is compiled at first use: the Lambda bootstrap starts without it.
var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// ParseEnvNames reads a list of variable names separated by commas or spaces (ROBOTHUB_EXEC_ENV,
// or one --exec-env). The receiver's own credentials (its webhook secret, its fleet broker's
// password) are never handed to commands and are refused.
func ParseEnvNames(list string) ([]string, error) {
	var names []string
	for _, n := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		switch {
		case !envName().MatchString(n):
			return nil, fmt.Errorf("%q is not the name of an environment variable (letters, digits and _; give names, not NAME=VALUE)", n)
		case n == webhook.SecretEnv:
			return nil, fmt.Errorf("%s is the receiver's own secret and is never passed to commands", n)
		case n == FleetPasswordEnv:
			return nil, fmt.Errorf("%s is the password of the receiver's fleet broker and is never passed to commands", n)
		}
		names = append(names, n)
	}
	return names, nil
}

// execEnviron is the environment of exec: commands: the variables of execEnvBase and extra that
// getenv finds set, read once when the route is built.
func execEnviron(getenv func(string) string, extra []string) []string {
	var env []string
	for _, name := range slices.Concat(execEnvBase, extra) {
		if v := getenv(name); v != "" && !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") }) {
			env = append(env, name+"="+v)
		}
	}
	return env
}
