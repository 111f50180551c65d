package python

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/robothub/robothub/core/apps"
)

// distribution is an installed distribution and its requirements.
type distribution struct {
	name, version string
	requires      []requirement
}

// requirement is one Requires-Dist entry: the distribution it names (normalized), the extras it
// asks of it, and the extra of its own it applies with ("" when always).
type requirement struct {
	name   string
	extras []string
	extra  string
}

// Needs lists the distributions of the venv that dist needs, directly or through others, with the
// extras asked of each. Environment markers other than extras are not evaluated: a requirement
// that does not apply here is not installed, so it is not followed.
func (v *Venv) Needs(dist string) (map[string]bool, error) {
	dists, err := v.installed()
	if err != nil {
		return nil, err
	}
	type node struct{ name, extras string }
	root := Normalize(dist)
	seen, out := map[node]bool{}, map[string]bool{}
	queue := []node{{name: root}}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		d, ok := dists[n.name]
		if seen[n] || !ok {
			continue
		}
		seen[n] = true
		if n.name != root {
			out[n.name] = true
		}
		for _, r := range d.requires {
			if r.extra == "" || slices.Contains(strings.Split(n.extras, ","), r.extra) {
				queue = append(queue, node{name: r.name, extras: strings.Join(r.extras, ",")})
			}
		}
	}
	return out, nil
}

// installed reads the distributions of the venv itself (its site-packages' .dist-info
// directories), with their requirements, by normalized name.
func (v *Venv) installed() (map[string]distribution, error) {
	infos, err := v.distInfos()
	if err != nil {
		return nil, err
	}
	out := map[string]distribution{}
	for _, dir := range infos {
		data, err := os.ReadFile(filepath.Join(dir, "METADATA"))
		if err != nil {
			continue // a half-written .dist-info: pip writes METADATA first, RECORD last
		}
		m, err := ParseMetadata(data)
		if err != nil || m.Name == "" {
			continue
		}
		d := distribution{name: Normalize(m.Name), version: m.Version}
		for _, r := range m.AllRequires {
			if req, ok := parseRequirement(r); ok {
				d.requires = append(d.requires, req)
			}
		}
		out[d.name] = d
	}
	return out, nil
}

func (v *Venv) distInfos() ([]string, error) {
	site, err := v.SitePackages()
	if err != nil {
		return nil, err
	}
	return filepath.Glob(filepath.Join(site, "*.dist-info"))
}

// installedOwners are the layouts of the venv's own distributions, from their RECORD files, and
// those of the system's site directories the venv sees (installLayout.systemOwners).
func (v *Venv) installedOwners(lay *installLayout) ([]layout, error) {
	infos, err := v.distInfos()
	if err != nil {
		return nil, err
	}
	out := lay.systemOwners()
	for _, dir := range infos {
		base := strings.TrimSuffix(filepath.Base(dir), ".dist-info")
		name, _, _ := strings.Cut(base, "-")
		paths, err := readRecord(dir, lay)
		if err != nil {
			continue // no RECORD: an install cut short, which Repair handles
		}
		files := make([]wheelFile, len(paths))
		for i, p := range paths {
			files[i] = wheelFile{inWheel: p, site: p}
		}
		out = append(out, newLayout(Normalize(name), files))
	}
	return out, nil
}

var (
	requirementPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[([^\]]*)\])?`)
	})
	directReference = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[^;]*@`) })
)

// RequirementName is the normalized name of the distribution a PEP 508 requirement names ("" if none).
func RequirementName(s string) string {
	r, _ := parseRequirement(s)
	return r.name
}

// parseRequirement reads the name, the extras and the extra marker of a PEP 508 requirement.
func parseRequirement(s string) (requirement, bool) {
	m := requirementPattern().FindStringSubmatch(s)
	if m == nil {
		return requirement{}, false
	}
	r := requirement{name: Normalize(m[1])}
	for _, e := range strings.Split(m[2], ",") {
		if e = strings.TrimSpace(e); e != "" {
			r.extras = append(r.extras, Normalize(e))
		}
	}
	if em := extraMarker().FindStringSubmatch(s); em != nil {
		r.extra = Normalize(em[1])
	}
	return r, true
}

// isDirectReference reports whether a requirement names a URL (pkg @ https://...).
func isDirectReference(req string) bool { return directReference().MatchString(req) }

// entryPointsScript prints, as JSON, every entry point of a group with its distribution and the
// source file of its module: listing imports no package code.
const entryPointsScript = `
import json, sys
from importlib.metadata import distributions
group = sys.argv[1]
out, seen = [], set()
for dist in distributions():
    try:
        eps = [ep for ep in dist.entry_points if ep.group == group]
    except Exception:
        continue
    for ep in eps:
        if ep.name in seen:
            continue
        seen.add(ep.name)
        module, _, attr = ep.value.partition(":")
        module = module.strip()
        wanted, path = module.replace(".", "/") + ".py", ""
        for f in dist.files or []:
            if str(f).replace("\\", "/") == wanted:
                path = str(dist.locate_file(f))
                break
        out.append({"name": ep.name, "module": module, "attr": attr.strip(),
                    "dist": dist.metadata["Name"], "version": dist.version,
                    "summary": dist.metadata.get("Summary") or "", "file": path})
json.dump(out, sys.stdout)
`

// EntryPoints lists the entry points of group that the venv's Python sees (first of each name).
func (v *Venv) EntryPoints(ctx context.Context, group string) ([]apps.InstalledEntryPoint, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, v.Python(), "-I", "-c", entryPointsScript, group)
	cmd.Env = v.environ(nil)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("listing %s entry points in %s: %v: %s", group, v.Dir, err, strings.TrimSpace(stderr.String()))
	}
	var found []struct {
		Name, Module, Attr, Dist, Version, Summary, File string
	}
	if err := json.Unmarshal(out, &found); err != nil {
		return nil, fmt.Errorf("listing %s entry points: %w", group, err)
	}
	eps := make([]apps.InstalledEntryPoint, len(found))
	for i, f := range found {
		eps[i] = apps.InstalledEntryPoint{EntryPoint: apps.EntryPoint{Name: f.Name, Module: f.Module, Attr: f.Attr},
			Dist: f.Dist, Version: f.Version, Summary: f.Summary, File: f.File}
	}
	return eps, nil
}
