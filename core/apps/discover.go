package apps

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"time"
)

// EntryPointGroup is the entry-point group an app declares itself in.
const EntryPointGroup = "robot_apps"

// discoverScript prints, as JSON, every entry point of group robot_apps in the venv, with its
// distribution and the custom_app_url literal of its module (read from the source file, never
// imported, so discovery runs no app code).
const discoverScript = `
import json, re, sys
from importlib.metadata import distributions
pattern = re.compile(r"""^\s*custom_app_url\s*(?::[^=]+)?=\s*["']([^"']+)["']""", re.M)
out, seen = [], set()
for dist in distributions():
    try:
        eps = [ep for ep in dist.entry_points if ep.group == "robot_apps"]
    except Exception:
        continue
    for ep in eps:
        if ep.name in seen:
            continue
        seen.add(ep.name)
        module, _, attr = ep.value.partition(":")
        module = module.strip()
        url = None
        wanted = module.replace(".", "/") + ".py"
        for f in dist.files or []:
            if str(f).replace("\\", "/") == wanted:
                try:
                    m = pattern.search(open(dist.locate_file(f), encoding="utf-8", errors="replace").read())
                    url = m.group(1) if m else None
                except OSError:
                    pass
                break
        out.append({"name": ep.name, "module": module, "class": attr.strip(),
                    "package": dist.metadata["Name"], "version": dist.version,
                    "summary": dist.metadata.get("Summary") or "", "custom_app_url": url})
json.dump(out, sys.stdout)
`

type discoveredApp struct {
	Name         string  `json:"name"`
	Module       string  `json:"module"`
	Class        string  `json:"class"`
	Package      string  `json:"package"`
	Version      string  `json:"version"`
	Summary      string  `json:"summary"`
	CustomAppURL *string `json:"custom_app_url"`
}

// AppNamePattern is what an app name must look like: it names a Python module, so it is also safe
// in URLs, paths and logs.
var AppNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,99}$`)

var modulePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// discover lists the apps installed in the venv. Entries whose names or modules could not be run
// safely are skipped.
func (v *Venv) discover(ctx context.Context) ([]discoveredApp, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, v.Python(), "-I", "-c", discoverScript)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("listing %s entry points in %s: %v: %s", EntryPointGroup, v.Dir, err, bytes.TrimSpace(stderr.Bytes()))
	}
	var found []discoveredApp
	if err := json.Unmarshal(stdout.Bytes(), &found); err != nil {
		return nil, fmt.Errorf("listing %s entry points: %w", EntryPointGroup, err)
	}
	kept := found[:0]
	for _, a := range found {
		if AppNamePattern.MatchString(a.Name) && modulePattern.MatchString(a.Module) {
			kept = append(kept, a)
		}
	}
	return kept, nil
}
