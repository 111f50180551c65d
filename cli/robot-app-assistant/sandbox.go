package main

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// What package code may see. check builds the package (its setup.py runs), imports it (the probe)
// and builds its dependencies; publish runs git in its folder. None of that code gets the user's
// credentials: every command runs with an environment built from an allow-list, and with HOME a
// throw-away directory, so ~/.cache/huggingface/token, ~/.netrc, ~/.ssh, ~/.gitconfig and the rest
// of the user's files are not where package code looks. (Code that runs as the user can still open
// a file by its absolute path: only a sandbox of its own would stop that; docs/RELIABILITY.md.)

// allowedVars are the variables of the user's environment that package code gets: what a build
// or an interpreter needs to run, nothing that holds a credential.
var allowedVars = []string{
	"PATH", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TEMP", "TMP", "TERM", "USER", "LOGNAME", "SHELL",
	"SOURCE_DATE_EPOCH",
	// Windows: Python and the C runtime need these to start.
	"SYSTEMROOT", "SystemRoot", "COMSPEC", "PATHEXT", "WINDIR", "PROGRAMDATA", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE",
}

// indexVars are what pip needs to reach the package index of the user's configuration: given to
// the steps that resolve and download dependencies only, never to the package's own build or code.
func indexVar(name string) bool {
	switch strings.ToUpper(name) {
	case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE":
		return true
	}
	return strings.HasPrefix(name, "PIP_") || strings.HasPrefix(name, "UV_")
}

// packageEnv is the whole environment of a command that may run package code: the allow-listed
// variables of environ, and HOME (with the XDG directories under it) set to home.
func packageEnv(environ []string, home string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(allowedVars, name) || strings.HasPrefix(name, "LC_") {
			out = append(out, kv)
		}
	}
	out = append(out, "HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"), "PYTHONNOUSERSITE=1")
	if runtime.GOOS == "windows" {
		out = append(out, "USERPROFILE="+home, "APPDATA="+filepath.Join(home, "AppData", "Roaming"),
			"LOCALAPPDATA="+filepath.Join(home, "AppData", "Local"))
	}
	return out
}

// indexEnv is what resolving dependencies adds to packageEnv: pip's index configuration from the
// environment, and pip's configuration file from the user's real home (the throw-away HOME has
// none), as pip itself would have read it.
func indexEnv(environ []string, realHome string) []string {
	var out []string
	hasConfigFile := false
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if indexVar(name) {
			out = append(out, kv)
			hasConfigFile = hasConfigFile || name == "PIP_CONFIG_FILE"
		}
	}
	if realHome != "" && !hasConfigFile {
		for _, p := range []string{filepath.Join(realHome, ".config", "pip", "pip.conf"), filepath.Join(realHome, ".pip", "pip.conf")} {
			if isFile(p) {
				out = append(out, "PIP_CONFIG_FILE="+p)
				break
			}
		}
	}
	if realHome != "" && isFile(filepath.Join(realHome, ".netrc")) {
		out = append(out, "NETRC="+filepath.Join(realHome, ".netrc"))
	}
	return out
}

// throwawayHome makes the HOME of package code for one run of the program.
func throwawayHome() (string, func(), error) {
	dir, err := os.MkdirTemp("", "robot-app-assistant-home-")
	if err != nil {
		return "", nil, err
	}
	return dir, func() { _ = os.RemoveAll(dir) }, nil
}
