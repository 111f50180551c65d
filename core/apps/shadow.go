package apps

import (
	"archive/zip"
	"context"
	"fmt"
	"os/exec"
	"path"
	"regexp"
	"sort"
	"strings"
)

// runtimeNames are the top-level names of the apps venv's own runtime: an app package that
// installs one replaces the SDK every app imports, or the tools that install apps.
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

// runtimeScripts are the venv's own commands, which a wheel's scripts would overwrite.
var runtimeScripts = regexp.MustCompile(`^((python|pip)(3(\.[0-9]+)?)?|activate.*|uv)$`)

// CheckShadowing returns an error naming what the wheel at wheelPath would install over the apps
// venv's runtime (nil if nothing): a top-level module in runtimeNames or stdlib, a .pth file (run at
// every Python start), or a script named as the venv's python or pip. It only reads the file list.
func CheckShadowing(wheelPath string, stdlib map[string]bool) error {
	zr, err := zip.OpenReader(wheelPath)
	if err != nil {
		return fmt.Errorf("reading the built wheel: %w", err)
	}
	defer zr.Close()
	found := map[string]string{} // file -> why
	var scripts []string
	for _, f := range zr.File {
		name := strings.TrimPrefix(path.Clean("/"+f.Name), "/")
		if strings.HasSuffix(strings.ToLower(name), ".pth") {
			found[name] = "a .pth file: Python runs its import lines at every start"
			continue
		}
		top, rest, _ := strings.Cut(name, "/")
		if strings.HasSuffix(top, ".dist-info") {
			if rest == "entry_points.txt" {
				scripts = append(scripts, wheelScripts(f)...)
			}
			continue
		}
		if strings.HasSuffix(top, ".data") {
			kind, inner, _ := strings.Cut(rest, "/")
			m := dataSitePackages.FindStringSubmatch(inner) // data is relative to the venv
			switch {
			case kind == "purelib" || kind == "platlib":
				name = inner
			case kind == "data" && m != nil:
				name = m[1]
			case kind == "scripts" || kind == "data" && strings.HasPrefix(inner, "bin/"):
				scripts = append(scripts, path.Base(inner))
				continue
			default:
				continue
			}
			top, _, _ = strings.Cut(name, "/")
		}
		module, _, _ := strings.Cut(top, ".") // json.py, _ssl.cpython-311-x86_64-linux-gnu.so, json/
		if why, ok := runtimeNames[module]; ok {
			found[name] = module + ", " + why
		} else if stdlib[module] {
			found[name] = module + ", a standard-library module"
		}
	}
	for _, s := range scripts {
		if runtimeScripts.MatchString(s) {
			found["script "+s] = "a command of the apps venv"
		}
	}
	if len(found) == 0 {
		return nil
	}
	var list []string
	for file, why := range found {
		list = append(list, file+" ("+why+")")
	}
	sort.Strings(list)
	if len(list) > 10 {
		list = append(list[:10], fmt.Sprintf("and %d more", len(list)-10))
	}
	return fmt.Errorf("the package would shadow the apps' runtime: it installs %s; an app package may install only its own modules: rename or remove these", strings.Join(list, ", "))
}

var dataSitePackages = regexp.MustCompile(`^lib/python[0-9.]*/site-packages/(.+)$`)

func wheelScripts(f *zip.File) []string {
	data, _ := readZipFile(f)
	eps := parseEntryPoints(string(data))
	var names []string
	for _, group := range []string{"console_scripts", "gui_scripts"} {
		for _, ep := range eps[group] {
			names = append(names, ep.name)
		}
	}
	return names
}

// StdlibModules lists python's standard library modules (before Python 3.10: the built-ins only).
func StdlibModules(ctx context.Context, python string) (map[string]bool, error) {
	out, err := exec.CommandContext(ctx, python, "-I", "-c",
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
