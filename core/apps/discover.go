package apps

import (
	"context"
	"io"
	"os"
	"regexp"
	"sync"
)

// EntryPointGroup is the entry-point group an app declares itself in.
const EntryPointGroup = "robot_apps"

// AppNamePattern is an app name: a Python module name, so also safe in URLs, paths and logs.
// It and the package's other patterns are compiled at first use: {0,99} alone is a hundred
// instructions, and every program that links the package (robothub --version included) paid
// for them at start (0.3-0.7 ms, GODEBUG=inittrace=1; issue 31).
var AppNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,99}$`) })

var modulePattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
})

// customAppURL is the custom_app_url class attribute of an app's module, read from its source:
// discovery imports no app code.
var customAppURL = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^\s*custom_app_url\s*(?::[^=]+)?=\s*["']([^"']+)["']`)
})

// discoveredApp is an installed app as its entry point declares it.
type discoveredApp struct {
	InstalledEntryPoint
	CustomAppURL *string
}

// discover lists the apps of the venv, skipping names or modules that could not run safely.
func (m *Manager) discover(ctx context.Context) ([]discoveredApp, error) {
	eps, err := m.py.EntryPoints(ctx, EntryPointGroup)
	if err != nil {
		return nil, err
	}
	var kept []discoveredApp
	for _, ep := range eps {
		if !AppNamePattern().MatchString(ep.Name) || !modulePattern().MatchString(ep.Module) {
			continue
		}
		d := discoveredApp{InstalledEntryPoint: ep}
		if ep.File != "" {
			if src, err := readHead(ep.File, 1<<20); err == nil {
				if match := customAppURL().FindSubmatch(src); match != nil {
					d.CustomAppURL = new(string(match[1]))
				}
			}
		}
		kept = append(kept, d)
	}
	return kept, nil
}

// readHead reads up to n bytes of a file.
func readHead(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}
