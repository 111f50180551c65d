package apps

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// requirementNamePattern is the distribution name at the start of a PEP 508 requirement.
var requirementNamePattern = regexp.MustCompile(`^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)`)

// requirementName returns the distribution a requirement names ("" if none).
func requirementName(req string) string {
	m := requirementNamePattern.FindStringSubmatch(req)
	if m == nil {
		return ""
	}
	return m[1]
}

// installDependencies installs what the app package requires, from the package source. The
// requirements are installed before the app itself, in one resolver run: when one cannot be
// resolved, pip changes nothing and the job fails with pip's message naming it, so the version
// installed before keeps working. An update (upgrade) then takes the newest versions of the
// requirements installed in the venv itself; those the system provides (numpy from apt, through
// --system-site-packages) are left to the system.
func (m *Manager) installDependencies(ctx context.Context, job *Job, meta wheelMeta, upgrade bool) error {
	var reqs []string
	for _, r := range meta.requires {
		if normalizeDist(requirementName(r)) == normalizeDist(SDKDistribution) {
			job.Logf("Requirement %s: the daemon provides robot_sdk %s", r, m.SDKVersion())
			continue
		}
		reqs = append(reqs, r)
	}
	if len(reqs) == 0 {
		return nil
	}
	job.Logf("Installing dependencies: %s", strings.Join(reqs, ", "))
	if err := m.venv.install(ctx, job, installOptions{}, reqs...); err != nil {
		return err
	}
	if !upgrade {
		return nil
	}
	own, err := m.venv.installedInVenv(ctx, reqs)
	if err != nil {
		return err
	}
	if len(own) == 0 {
		return nil
	}
	var targets, names []string
	for _, r := range reqs {
		if name := requirementName(r); own[normalizeDist(name)] {
			targets, names = append(targets, r), append(names, name)
		}
	}
	job.Logf("Updating %s to the newest versions allowed", strings.Join(names, ", "))
	return m.venv.install(ctx, job, installOptions{upgradePackages: names}, targets...)
}

// venvLocationScript prints which of the distributions named in argv are installed in the venv
// itself rather than in the system's site-packages.
const venvLocationScript = `
import json, os, sys
from importlib.metadata import PackageNotFoundError, distribution
prefix = os.path.realpath(sys.prefix)
out = []
for name in sys.argv[1:]:
    try:
        d = distribution(name)
    except PackageNotFoundError:
        continue
    loc = os.path.realpath(str(d.locate_file("")))
    if loc == prefix or loc.startswith(prefix + os.sep):
        out.append(name)
json.dump(out, sys.stdout)
`

// installedInVenv returns, normalized, the names of the requirements reqs whose installed
// distribution lives in the venv.
func (v *Venv) installedInVenv(ctx context.Context, reqs []string) (map[string]bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	args := []string{"-I", "-c", venvLocationScript}
	for _, r := range reqs {
		if name := requirementName(r); name != "" {
			args = append(args, name)
		}
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, v.Python(), args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("finding where the dependencies are installed: %v: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	var names []string
	if err := json.Unmarshal(stdout.Bytes(), &names); err != nil {
		return nil, fmt.Errorf("finding where the dependencies are installed: %w", err)
	}
	out := map[string]bool{}
	for _, n := range names {
		out[normalizeDist(n)] = true
	}
	return out, nil
}
