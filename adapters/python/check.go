package python

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/robothub/robothub/core/apps"
)

// runtimeNames are the top-level names of the apps venv's own runtime: a package that installs one
// replaces the SDK every app imports, the tools that install apps, or code Python runs at start.
var runtimeNames = map[string]string{
	"robot_sdk":       "the robot SDK the daemon provides",
	"pip":             "the installer of the apps venv",
	"setuptools":      "the build tool of the apps venv",
	"pkg_resources":   "part of setuptools",
	"_distutils_hack": "part of setuptools",
	"wheel":           "the build tool of the apps venv",
	"sitecustomize":   "a module Python runs at every start",
	"usercustomize":   "a module Python runs at every start",
}

// RuntimeModule says why a top-level module name belongs to the apps venv's runtime ("" if not).
func RuntimeModule(name string) string { return runtimeNames[name] }

// runtimeScripts are the venv's own commands, which a wheel's scripts would overwrite.
var runtimeScripts = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^((python|pip)(3(\.[0-9]+)?)?|activate.*|uv)$`) })

// Check refuses pkg when its wheel or a dependency's would install (it reads only the file lists,
// mapped through the venv's real layout: installLayout): a .pth file (Python runs its import lines
// at every start), a top-level module of the runtime (runtimeNames) or of the standard library, a
// command of the venv, a file it cannot map to a place of the venv, or a module that another
// installed distribution, the system's site-packages the venv sees, or another of these wheels,
// owns: the same file, or a top-level module or regular package (one with __init__.py) of the same
// name. Namespace packages may be shared.
func (v *Venv) Check(ctx context.Context, pkg apps.Wheel, deps []apps.Wheel) error {
	stdlib, err := v.Stdlib(ctx)
	if err != nil {
		return err
	}
	lay, err := v.installLayout(ctx)
	if err != nil {
		return err
	}
	owners, err := v.installedOwners(lay)
	if err != nil {
		return err
	}
	wheels := append(slices.Clone(deps), pkg)
	layouts := make([]layout, len(wheels))
	for i, w := range wheels {
		files, err := wheelFiles(w.Path, lay)
		if err != nil {
			return err
		}
		layouts[i] = newLayout(Normalize(w.Name), files)
	}
	var problems []string
	for i, w := range wheels {
		found := shadowing(layouts[i], stdlib)
		for j, other := range layouts {
			if j != i && other.dist != layouts[i].dist {
				for _, c := range layouts[i].conflicts(other) {
					setOnce(found, c, "also installed by "+wheels[j].Name+" "+wheels[j].Version+", which this install brings in too")
				}
			}
		}
		for _, other := range owners {
			if other.dist != layouts[i].dist {
				for _, c := range layouts[i].conflicts(other) {
					setOnce(found, c, "owned by "+other.owner)
				}
			}
		}
		if len(found) == 0 {
			continue
		}
		what := "the package"
		if i < len(deps) {
			what = fmt.Sprintf("its dependency %s %s", w.Name, w.Version)
		}
		problems = append(problems, what+" would shadow the apps' runtime: it installs "+listProblems(found))
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s; an app package and its dependencies may install only their own modules: rename or remove these", strings.Join(problems, "; "))
}

// setOnce keeps the first reason found for a file: the runtime's names say more than who owns them.
func setOnce(found map[string]string, file, why string) {
	if _, ok := found[file]; !ok {
		found[file] = why
	}
}

// shadowing returns what of one wheel's layout shadows the runtime or the standard library.
func shadowing(l layout, stdlib map[string]bool) map[string]string {
	found := map[string]string{} // file -> why
	for _, f := range l.files {
		if f.refused != "" {
			found[f.inWheel] = f.refused
			continue
		}
		if f.script != "" {
			if runtimeScripts().MatchString(f.script) {
				found["script "+f.script] = "a command of the apps venv"
			}
			continue
		}
		if strings.HasSuffix(strings.ToLower(f.inWheel), ".pth") {
			found[f.site] = "a .pth file: Python runs its import lines at every start"
			continue
		}
		top := topLevel(f.site)
		if top == "" {
			continue
		}
		module, _, _ := strings.Cut(top, ".") // json.py, _ssl.cpython-311-x86_64-linux-gnu.so, json/
		if why, ok := runtimeNames[module]; ok {
			found[f.site] = module + ", " + why
		} else if stdlib[module] {
			found[f.site] = module + ", a standard-library module"
		}
	}
	return found
}

func listProblems(found map[string]string) string {
	var list []string
	for file, why := range found {
		list = append(list, file+" ("+why+")")
	}
	sort.Strings(list)
	if len(list) > 10 {
		list = append(list[:10], fmt.Sprintf("and %d more", len(list)-10))
	}
	return strings.Join(list, ", ")
}

// topLevel is the first element of a path in site-packages, "" for metadata and caches.
func topLevel(site string) string {
	top, _, _ := strings.Cut(site, "/")
	if top == "" || top == "__pycache__" || strings.HasSuffix(top, ".dist-info") || strings.HasSuffix(top, ".egg-info") || strings.HasSuffix(top, ".data") {
		return ""
	}
	return top
}

// layout is where one distribution's files go in site-packages.
type layout struct {
	dist    string // normalized; "" for the system's site directories
	owner   string // who owns these files, as a refusal names it
	files   []wheelFile
	paths   map[string]bool // every file, relative to site-packages
	regular map[string]bool // top-level names it claims whole: modules and packages with __init__.py
	tops    map[string]bool // every top-level name it puts files under
}

func newLayout(dist string, files []wheelFile) layout {
	l := layout{dist: dist, owner: "the installed " + dist, files: files, paths: map[string]bool{}, regular: map[string]bool{}, tops: map[string]bool{}}
	for _, f := range files {
		top := topLevel(f.site)
		if top == "" {
			continue
		}
		l.paths[f.site] = true
		name, _, _ := strings.Cut(top, ".")
		l.tops[name] = true
		if !strings.Contains(f.site, "/") || f.site == top+"/__init__.py" {
			l.regular[name] = true
		}
	}
	return l
}

// conflicts lists the files of l that would overwrite or shadow what o installs.
func (l layout) conflicts(o layout) []string {
	var out []string
	for _, f := range l.files {
		top := topLevel(f.site)
		if top == "" {
			continue
		}
		name, _, _ := strings.Cut(top, ".")
		if o.paths[f.site] || (l.regular[name] && o.tops[name]) || o.regular[name] {
			out = append(out, f.site)
		}
	}
	return out
}

// Stdlib lists the standard library's top-level modules of the venv's Python (before Python 3.10:
// the built-ins only), asked once it has answered.
func (v *Venv) Stdlib(ctx context.Context) (map[string]bool, error) {
	v.stdlibMu.Lock()
	defer v.stdlibMu.Unlock()
	if v.stdlib != nil {
		return v.stdlib, nil
	}
	names, err := StdlibModules(ctx, v.Python())
	if err != nil {
		return nil, err // asked again next time: a cancelled job must not spoil every later check
	}
	v.stdlib = names
	return names, nil
}

// StdlibModules lists python's standard-library modules (before Python 3.10: the built-ins only).
func StdlibModules(ctx context.Context, python string) (map[string]bool, error) {
	out, err := exec.CommandContext(ctx, python, "-I", "-S", "-c",
		"import sys\nprint('\\n'.join(sorted(getattr(sys, 'stdlib_module_names', sys.builtin_module_names))))").Output()
	if err != nil {
		return nil, fmt.Errorf("listing the standard library of %s: %w", python, err)
	}
	names := map[string]bool{}
	for _, n := range strings.Fields(string(out)) {
		names[n] = true
	}
	return names, nil
}
