package python

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// installLayout is where an install into a venv puts each part of a wheel: the venv's own scheme,
// as its Python's sysconfig gives it, every directory resolved through symbolic links (a venv's
// lib64 is a link to lib, so a wheel's .data/data/lib64/python3.11/site-packages/x.pth lands in
// site-packages), and the system's site directories the venv imports from as well.
type installLayout struct {
	prefix  string   // the venv: the "data" scheme directory
	sites   []string // purelib and platlib: where Python imports the venv's packages from
	scripts string
	headers string
	system  []string // site directories outside the venv on its sys.path (--system-site-packages)
}

// layoutScript asks a venv's Python for its install scheme and its import path.
const layoutScript = `import json, sys, sysconfig
print(json.dumps({"paths": sysconfig.get_paths(), "prefix": sys.prefix, "path": sys.path}))`

// installLayout asks the venv's Python where an install puts things, once for each configuration
// of the venv (pyvenv.cfg: its base Python, whether it sees the system's packages).
func (v *Venv) installLayout(ctx context.Context) (*installLayout, error) {
	cfg, _ := os.ReadFile(filepath.Join(v.Dir, "pyvenv.cfg"))
	v.layoutMu.Lock()
	defer v.layoutMu.Unlock()
	if v.layout != nil && v.layoutCfg == string(cfg) {
		return v.layout, nil
	}
	out, err := exec.CommandContext(ctx, v.Python(), "-I", "-c", layoutScript).Output()
	if err != nil {
		return nil, fmt.Errorf("asking the venv's Python %s for its layout: %w", v.Python(), err)
	}
	var got struct {
		Paths  map[string]string `json:"paths"`
		Prefix string            `json:"prefix"`
		Path   []string          `json:"path"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		return nil, fmt.Errorf("the venv's Python %s described its layout as %q: %w", v.Python(), out, err)
	}
	l := newInstallLayout(got.Prefix, []string{got.Paths["purelib"], got.Paths["platlib"]}, got.Paths["scripts"], got.Path)
	v.layout, v.layoutCfg = l, string(cfg)
	return l, nil
}

// newInstallLayout resolves a venv's scheme (sites: purelib and platlib) and picks the system's
// site directories out of its sys.path: the site-packages and dist-packages outside the venv.
func newInstallLayout(prefix string, sites []string, scripts string, sysPath []string) *installLayout {
	l := &installLayout{prefix: resolvePath(prefix), scripts: resolvePath(scripts), headers: resolvePath(filepath.Join(prefix, "include"))}
	for _, s := range sites {
		if s = resolvePath(s); s != "" && !slices.Contains(l.sites, s) {
			l.sites = append(l.sites, s)
		}
	}
	for _, p := range sysPath {
		base := filepath.Base(p)
		if (base != "site-packages" && base != "dist-packages") || !filepath.IsAbs(p) {
			continue
		}
		if r := resolvePath(p); !within(r, l.prefix) && !slices.Contains(l.system, r) {
			if fi, err := os.Stat(r); err == nil && fi.IsDir() {
				l.system = append(l.system, r)
			}
		}
	}
	return l
}

// resolvePath resolves the symbolic links of the longest part of p that exists; the rest is kept
// as written (cleaned): where a file would land once created.
func resolvePath(p string) string {
	if p == "" {
		return ""
	}
	p = filepath.Clean(p)
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// within reports whether p is dir or under it (both cleaned and resolved).
func within(p, dir string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// siteRel is the path of p relative to the site directory it is in, or "" when it is in none.
func (l *installLayout) siteRel(p string) string {
	for _, s := range l.sites {
		if within(p, s) {
			rel, _ := filepath.Rel(s, p)
			if rel == "." {
				return ""
			}
			return filepath.ToSlash(rel)
		}
	}
	return ""
}

// place says where a file that a wheel's .data/data puts at inner (relative to the venv) lands:
// into site-packages (site), among the commands (script), somewhere harmless (neither, no
// refusal), or somewhere the check cannot vouch for (refused says why).
func (l *installLayout) place(inner string) (site, script, refused string) {
	dest := resolvePath(filepath.Join(l.prefix, filepath.FromSlash(inner)))
	switch {
	case !within(dest, l.prefix):
		return "", "", "a data file that lands outside the venv (" + dest + ")"
	case l.siteRel(dest) != "":
		return l.siteRel(dest), "", ""
	case within(dest, l.scripts):
		return "", filepath.Base(dest), ""
	case within(dest, l.headers):
		return "", "", ""
	case dest == filepath.Join(l.prefix, "pyvenv.cfg"):
		return "", "", "the venv's configuration (pyvenv.cfg)"
	}
	for _, s := range l.sites {
		// lib/python3.11 beside site-packages: Python's library of the venv, which the check
		// cannot map to a package's own files.
		if within(dest, filepath.Dir(s)) {
			return "", "", "a file of the venv's Python library outside site-packages (" + dest + ")"
		}
	}
	return "", "", ""
}

// systemOwners are the layouts of the system's site directories the venv imports from (with
// --system-site-packages): each top-level module and package there counts as owned, so that no
// dependency shadows the system's numpy for every app. Read from the directories themselves:
// Debian's packages often have no RECORD.
func (l *installLayout) systemOwners() []layout {
	var out []layout
	for _, dir := range l.system {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		var files []wheelFile
		for _, e := range entries {
			name := e.Name()
			switch {
			case strings.HasSuffix(name, ".dist-info"), strings.HasSuffix(name, ".egg-info"), strings.HasSuffix(name, ".pth"),
				name == "__pycache__", strings.HasPrefix(name, "."):
				continue
			case e.IsDir():
				if _, err := os.Stat(filepath.Join(dir, name, "__init__.py")); err == nil {
					files = append(files, wheelFile{inWheel: name + "/__init__.py", site: name + "/__init__.py"})
				} else {
					files = append(files, wheelFile{inWheel: name + "/", site: name + "/"}) // a namespace package
				}
			case strings.HasSuffix(name, ".py") || strings.HasSuffix(name, ".so") || strings.HasSuffix(name, ".pyd"):
				files = append(files, wheelFile{inWheel: name, site: name})
			}
		}
		ly := newLayout("", files)
		ly.owner = "the system's " + dir + " (the venv sees it: --system-site-packages)"
		out = append(out, ly)
	}
	return out
}

// recordSite maps a RECORD path of a distribution whose .dist-info is in site to its path
// relative to the site directory it lands in ("" when it lands in none: scripts, headers).
func (l *installLayout) recordSite(site, rec string) string {
	if rec == "" || filepath.IsAbs(rec) {
		return ""
	}
	return l.siteRel(resolvePath(filepath.Join(site, filepath.FromSlash(rec))))
}
