package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"gopkg.in/yaml.v3"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/hub/card"
)

//go:embed inspect_app.py
var inspectScript string

// defaultWheelDir holds Debian's wheels of pip, setuptools and wheel (python3-*-whl packages).
const defaultWheelDir = "/usr/share/python-wheels"

func checkCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "check an app package: structure, entry point, app class, README card, and a real install",
		ArgsUsage: "<path>",
		Description: `Checks, and reports every problem with what to fix:
  - index.html and style.css at the root (the space's landing page);
  - pyproject.toml: valid TOML, [project] name, and the entry point
    <app_name> = "<app_name>.main:<ClassName>" in group robot_apps;
  - the package <app_name>/ with __init__.py and main.py; in main.py the class derives from
    RobotApp, has run(self, robot, stop_event), and an if __name__ == "__main__": block that calls
    wrapped_run() and stop() on KeyboardInterrupt;
  - README.md front matter: valid YAML (the subset of hub cards: block and flow mappings and lists,
    plain, quoted and block scalars, comments), with a title and the tag robot_python_app;
  - an install into a temporary venv (with the robot SDK of this version), its dependencies
    resolved as the robot resolves them: from the package index of pip's configuration
    (PIP_INDEX_URL, pip.conf) or --index-url, or only from --wheel-dir with --offline; it must
    register the entry point, load a RobotApp subclass and its static/ files, and an uninstall
    must remove it.
Exit status 1 when any check fails.

The temporary venvs share a base (pip, setuptools, wheel, robot_sdk) kept in
$XDG_CACHE_HOME/robot-app-assistant (default ~/.cache/robot-app-assistant); remove it to rebuild.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "python", Usage: "the Python interpreter (3.11 or newer) to check and install with (default $" + envPython + ", then python3)"},
			&cli.BoolFlag{Name: "system-site-packages", Usage: "let the check venvs see the interpreter's own packages, as a robot-daemon started with --system-site-packages (default $" + envSystemSite + ")"},
			&cli.StringSliceFlag{Name: "wheel-dir", Usage: "wheels for pip --find-links, the only source with --offline (default " + defaultWheelDir + ")"},
			&cli.StringFlag{Name: "index-url", Usage: "the package index dependencies come from (default: pip's configuration, as on the robot)"},
			&cli.StringSliceFlag{Name: "extra-index-url", Usage: "another package index, searched as well"},
			&cli.BoolFlag{Name: "offline", Usage: "install dependencies from the --wheel-dir directories only, as a robot started with --offline"},
		},
		OnUsageError: onUsageError,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("check needs one <path>, got %d argument(s)", c.NArg())
			}
			opts := checkOptionsFrom(c, e, c.Args().First())
			return runCheck(c.Context, e, opts)
		},
	}
}

// checkOptions says what to check and with what.
type checkOptions struct {
	dir            string
	python         string
	wheelDirs      []string
	cacheDir       string
	offline        bool
	systemSite     bool // the venvs see the interpreter's own packages (--system-site-packages)
	indexURL       string
	extraIndexURLs []string
}

func checkOptionsFrom(c *cli.Context, e *env, dir string) checkOptions {
	wheels := c.StringSlice("wheel-dir")
	if len(wheels) == 0 {
		wheels = []string{defaultWheelDir}
	}
	opts := defaultCheckOptions(e)
	opts.dir, opts.wheelDirs = dir, wheels
	if p := c.String("python"); p != "" {
		opts.python = p
	}
	if c.IsSet("system-site-packages") {
		opts.systemSite = c.Bool("system-site-packages")
	}
	opts.offline, opts.indexURL, opts.extraIndexURLs = c.Bool("offline"), c.String("index-url"), c.StringSlice("extra-index-url")
	return opts
}

// The environment variables that give check's interpreter and --system-site-packages once for a
// shell, for every check, publish and create --publish: on a laptop without a package index, the
// robot SDK's numpy, scipy, pydantic, FastAPI and uvicorn come from the system's builds
// (ROBOT_APP_ASSISTANT_PYTHON=/usr/bin/python3 ROBOT_APP_ASSISTANT_SYSTEM_SITE_PACKAGES=1 with
// Debian's python3-numpy and the others).
const (
	envPython     = "ROBOT_APP_ASSISTANT_PYTHON"
	envSystemSite = "ROBOT_APP_ASSISTANT_SYSTEM_SITE_PACKAGES"
)

// defaultCheckOptions are check's options without flags: the environment's, else python3 and the
// default wheel directory.
func defaultCheckOptions(e *env) checkOptions {
	opts := checkOptions{python: e.getenv(envPython), wheelDirs: []string{defaultWheelDir}, cacheDir: cacheDir(e.getenv)}
	if opts.python == "" {
		opts.python = "python3"
	}
	opts.systemSite, _ = strconv.ParseBool(e.getenv(envSystemSite))
	return opts
}

// cacheDir is where check keeps its base venvs.
func cacheDir(getenv func(string) string) string {
	if d := getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "robot-app-assistant")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache", "robot-app-assistant")
	}
	return filepath.Join(os.TempDir(), "robot-app-assistant-cache")
}

// checkFailedError says that check found problems (already printed).
type checkFailedError struct {
	dir      string
	problems int
}

func (c *checkFailedError) Error() string {
	s := "s"
	if c.problems == 1 {
		s = ""
	}
	return fmt.Sprintf("check found %d problem%s in %s", c.problems, s, c.dir)
}

// runCheck checks the package, prints the report, and fails with a *checkFailedError when a check fails.
func runCheck(ctx context.Context, e *env, opts checkOptions) error {
	start := time.Now()
	r, err := checkApp(ctx, e, opts)
	if err != nil {
		return err
	}
	e.log.Debug("check done", "dir", r.dir, "problems", r.problems(), "elapsed", time.Since(start))
	if n := r.problems(); n > 0 {
		return &checkFailedError{dir: r.dir, problems: n}
	}
	fmt.Fprintf(e.stdout, "All checks passed: %s is ready to publish.\n", r.dir)
	return nil
}

// finding is the outcome of one check.
type finding struct {
	status string // ok, FAIL or skip
	what   string
	fix    string
}

// checkReport collects the findings about one package and what check learned about it.
type checkReport struct {
	dir      string
	findings []finding
	app      string // the entry point's name, once known
	class    string
	module   string
	dist     string
	out      io.Writer // where findings are printed as they are made
}

func (r *checkReport) ok(format string, args ...any) {
	r.add(finding{status: "ok", what: fmt.Sprintf(format, args...)})
}

func (r *checkReport) fail(what, fix string) {
	r.add(finding{status: "FAIL", what: what, fix: fix})
}

func (r *checkReport) skip(what, why string) {
	r.add(finding{status: "skip", what: what, fix: why})
}

// add records a finding and prints it at once: check and publish show each finding as it is
// made, not all of them at the end (publish was silent for ~20 s before printing them at once).
func (r *checkReport) add(f finding) {
	r.findings = append(r.findings, f)
	if r.out != nil {
		printFinding(r.out, f)
	}
}

// step says what a slow check is doing, before it does it.
func (r *checkReport) step(what string) {
	if r.out != nil {
		fmt.Fprintf(r.out, "  ...   %s\n", what)
	}
}

func (r *checkReport) problems() int {
	n := 0
	for _, f := range r.findings {
		if f.status == "FAIL" {
			n++
		}
	}
	return n
}

func printFinding(w io.Writer, f finding) {
	fmt.Fprintf(w, "  %-4s  %s\n", f.status, f.what)
	if f.fix != "" {
		label := "fix:"
		if f.status == "skip" {
			label = "why:"
		}
		for i, line := range strings.Split(f.fix, "\n") {
			if i == 0 {
				fmt.Fprintf(w, "        %s %s\n", label, line)
			} else {
				fmt.Fprintf(w, "             %s\n", line)
			}
		}
	}
}

// inspection is what inspect_app.py reports.
type inspection struct {
	Python struct {
		Version       []int    `json:"version"`
		Executable    string   `json:"executable"`
		BundledWheels []string `json:"bundled_wheels"`
	} `json:"python"`
	Pyproject struct {
		Missing      bool                                 `json:"missing"`
		Error        *lineError                           `json:"error"`
		HasProject   bool                                 `json:"has_project"`
		Name         *string                              `json:"name"`
		BuildBackend *string                              `json:"build_backend"`
		Groups       map[string]map[string]entryPointSpec `json:"groups"`
		HeaderLines  map[string]int                       `json:"header_lines"`
	} `json:"pyproject"`
	Modules map[string]moduleInfo `json:"modules"`
}

type lineError struct {
	Line int    `json:"line"`
	Msg  string `json:"msg"`
}

type entryPointSpec struct {
	Value *string `json:"value"`
	Line  int     `json:"line"`
}

type moduleInfo struct {
	File      *string              `json:"file"`
	Error     *lineError           `json:"error"`
	Classes   map[string]classInfo `json:"classes"`
	MainBlock struct {
		Present                  bool `json:"present"`
		Line                     int  `json:"line"`
		CallsWrappedRun          bool `json:"calls_wrapped_run"`
		HandlesKeyboardInterrupt bool `json:"handles_keyboard_interrupt"`
	} `json:"main_block"`
}

type classInfo struct {
	Line    int      `json:"line"`
	Bases   []string `json:"bases"`
	Derives bool     `json:"derives"`
	Run     *struct {
		Line   int      `json:"line"`
		Args   []string `json:"args"`
		Async  bool     `json:"async"`
		Vararg bool     `json:"vararg"`
	} `json:"run"`
}

// at formats a file:line position (just the file when the line is unknown).
func at(file string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s:%d", file, line)
	}
	return file
}

var entryValue = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*:\s*([A-Za-z_][A-Za-z0-9_]*)\s*$`)

// checkApp runs every check on the package at opts.dir. It returns an error only when it cannot
// check at all (no such directory, no Python).
func checkApp(ctx context.Context, e *env, opts checkOptions) (*checkReport, error) {
	dir, err := filepath.Abs(opts.dir)
	if err != nil {
		return nil, err
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("%s is not a directory: give the folder of the app package (the one with pyproject.toml)", opts.dir)
	}
	r := &checkReport{dir: dir, out: e.stdout}
	fmt.Fprintf(e.stdout, "Checking %s\n", dir)

	for _, f := range []string{"index.html", "style.css"} {
		if isFile(filepath.Join(dir, f)) {
			r.ok("%s (the space's landing page)", f)
		} else {
			r.fail(f+" is missing: it is part of the space's landing page",
				"add "+f+" at the root of the package (robot-app-assistant create writes one)")
		}
	}

	insp, err := inspectApp(ctx, e, opts.python, dir)
	if err != nil {
		return nil, err
	}
	if v := insp.Python.Version; len(v) >= 2 && (v[0] < 3 || (v[0] == 3 && v[1] < 11)) {
		return nil, fmt.Errorf("%s is Python %d.%d: check needs Python 3.11 or newer (pass --python)", opts.python, v[0], v[1])
	}
	entryOK := checkPyproject(r, insp, filepath.Base(dir))
	if entryOK {
		checkModule(r, dir, insp)
	}
	checkReadme(r, dir)

	if !entryOK {
		r.skip("install into a temporary venv", "the entry point is not usable: fix pyproject.toml first")
		return r, nil
	}
	if err := checkInstall(ctx, e, opts, r, insp.Python.Executable, insp.Python.BundledWheels); err != nil {
		return nil, err
	}
	return r, nil
}

// inspectApp runs inspect_app.py on the package.
func inspectApp(ctx context.Context, e *env, python, dir string) (*inspection, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-I", "-c", inspectScript, dir)
	cmd.Env = e.packageEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	e.log.Debug("run", "cmd", python+" -I -c <inspect_app.py> "+dir)
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, fmt.Errorf("%s not found: check needs Python 3.11 or newer (pass --python)", python)
		}
		return nil, fmt.Errorf("inspecting the package with %s: %v: %s", python, err, tail(stderr.String(), 5))
	}
	var insp inspection
	if err := json.Unmarshal(stdout.Bytes(), &insp); err != nil {
		return nil, fmt.Errorf("inspecting the package: unexpected output from %s: %v", python, err)
	}
	return &insp, nil
}

// checkPyproject checks pyproject.toml and its robot_apps entry point; it reports whether the
// entry point is usable for the checks that follow.
func checkPyproject(r *checkReport, insp *inspection, dirName string) bool {
	pp := insp.Pyproject
	guess := dirName
	if validateAppName(guess) != nil {
		guess = "my_app"
	}
	guessNames := namesFor(guess, defaultWebPort)
	switch {
	case pp.Missing:
		r.fail("pyproject.toml is missing: this folder is not a Python package",
			"run check on the folder that holds pyproject.toml, or create the app with robot-app-assistant create")
		return false
	case pp.Error != nil:
		r.fail(at("pyproject.toml", pp.Error.Line)+": not valid TOML: "+pp.Error.Msg, "fix the TOML syntax there")
		return false
	case !pp.HasProject || pp.Name == nil || *pp.Name == "":
		r.fail("pyproject.toml: [project] has no name", fmt.Sprintf("add a [project] table with name = %q", guessNames.Dist))
		return false
	}
	r.dist = *pp.Name
	r.ok("pyproject.toml: project %s", r.dist)
	if pp.BuildBackend != nil && !strings.HasPrefix(*pp.BuildBackend, "setuptools") {
		r.fail(fmt.Sprintf("pyproject.toml: build backend %s: the robot builds apps with the setuptools of its apps venv only", *pp.BuildBackend),
			"use [build-system] requires = [\"setuptools>=61\"] and build-backend = \"setuptools.build_meta\"")
	}

	want := fmt.Sprintf("[project.entry-points.%s]\n%s = \"%s.main:%s\"", apps.EntryPointGroup, guessNames.App, guessNames.App, guessNames.Class)
	entries, ok := pp.Groups[apps.EntryPointGroup]
	if !ok || len(entries) == 0 {
		var others []string
		for g := range pp.Groups {
			others = append(others, g)
		}
		slices.Sort(others)
		for _, g := range others {
			if strings.Contains(strings.ToLower(g), "app") || strings.Contains(strings.ToLower(g), "robot") {
				r.fail(fmt.Sprintf("%s: entry points are in group %q, not %s", at("pyproject.toml", pp.HeaderLines[g]), g, apps.EntryPointGroup),
					fmt.Sprintf("rename the table to [project.entry-points.%s] (with underscores): the daemon reads only that group", apps.EntryPointGroup))
				return false
			}
		}
		r.fail(fmt.Sprintf("pyproject.toml: no entry point in group %s: the daemon would not find the app", apps.EntryPointGroup),
			"add to pyproject.toml:\n"+want)
		return false
	}
	names := make([]string, 0, len(entries))
	for name := range entries {
		names = append(names, name)
	}
	slices.Sort(names)
	usable := true
	for _, name := range names {
		spec := entries[name]
		where := at("pyproject.toml", spec.Line)
		if spec.Value == nil {
			r.fail(fmt.Sprintf("%s: entry point %s is not a string", where, name), fmt.Sprintf("write it as %s = \"%s.main:<ClassName>\"", name, name))
			usable = false
			continue
		}
		if !apps.AppNamePattern().MatchString(name) {
			r.fail(fmt.Sprintf("%s: entry point name %q is not a Python identifier", where, name),
				"name the entry point after the app's package: letters, digits and underscores, e.g. "+strings.ReplaceAll(name, "-", "_"))
			usable = false
			continue
		}
		m := entryValue.FindStringSubmatch(*spec.Value)
		if m == nil {
			r.fail(fmt.Sprintf("%s: entry point %s = %q is not \"<module>:<ClassName>\"", where, name, *spec.Value),
				fmt.Sprintf("write it as %s = \"%s.main:<ClassName>\"", name, name))
			usable = false
			continue
		}
		if m[1] != name+".main" {
			r.fail(fmt.Sprintf("%s: entry point %s names module %s; the daemon runs python -m %s.main", where, name, m[1], name),
				fmt.Sprintf("write it as %s = \"%s.main:%s\" with the app in %s/main.py", name, name, m[2], name))
			usable = false
			continue
		}
		if r.app == "" {
			r.app, r.module, r.class = name, m[1], m[2]
		}
		r.ok("entry point %s: %s = %q", apps.EntryPointGroup, name, *spec.Value)
	}
	return usable && r.app != ""
}

// checkModule checks the package and the app class that the entry point names.
func checkModule(r *checkReport, dir string, insp *inspection) {
	pkgDir := filepath.Join(dir, r.app)
	if !isDir(pkgDir) && isDir(filepath.Join(dir, "src", r.app)) {
		pkgDir = filepath.Join(dir, "src", r.app)
	}
	rel, _ := filepath.Rel(dir, pkgDir)
	if isFile(filepath.Join(pkgDir, "__init__.py")) {
		r.ok("package %s/ with __init__.py", rel)
	} else {
		r.fail(fmt.Sprintf("%s/__init__.py is missing: %s is not a Python package", rel, r.app),
			fmt.Sprintf("add an empty %s/__init__.py", rel))
	}
	mod := insp.Modules[r.module]
	if mod.File == nil {
		r.fail(fmt.Sprintf("%s/main.py is missing (the entry point %s names module %s)", rel, r.app, r.module),
			fmt.Sprintf("put the app in %s/main.py: class %s(RobotApp) with run(self, robot, stop_event)", rel, r.class))
		return
	}
	file := filepath.ToSlash(*mod.File)
	if mod.Error != nil {
		r.fail(at(file, mod.Error.Line)+": "+mod.Error.Msg, "fix the Python code there")
		return
	}
	cls, ok := mod.Classes[r.class]
	if !ok {
		r.fail(fmt.Sprintf("%s: no class %s (the entry point %s names %s:%s)", file, r.class, r.app, r.module, r.class),
			fmt.Sprintf("define class %s(RobotApp) in %s, or point the entry point at the app's class", r.class, file))
	} else {
		where := at(file, cls.Line)
		if cls.Derives {
			r.ok("%s: class %s derives from RobotApp", where, r.class)
		} else {
			bases := "no base class"
			if len(cls.Bases) > 0 {
				bases = "bases: " + strings.Join(cls.Bases, ", ")
			}
			r.fail(fmt.Sprintf("%s: class %s does not derive from RobotApp (%s)", where, r.class, bases),
				fmt.Sprintf("declare it as class %s(RobotApp), with from robot_sdk import RobotApp", r.class))
		}
		switch run := cls.Run; {
		case run == nil:
			r.fail(fmt.Sprintf("%s: class %s has no run method", where, r.class),
				"add def run(self, robot, stop_event): the app's loop, which returns once stop_event is set")
		case run.Async:
			r.fail(fmt.Sprintf("%s: run is a coroutine (async def)", at(file, run.Line)),
				"make it a plain def run(self, robot, stop_event): wrapped_run calls it directly")
		case len(run.Args) != 3 && !(run.Vararg && len(run.Args) <= 3):
			r.fail(fmt.Sprintf("%s: run takes (%s); the SDK calls run(robot, stop_event)", at(file, run.Line), strings.Join(run.Args, ", ")),
				"define it as def run(self, robot, stop_event)")
		default:
			r.ok("%s: run(%s)", at(file, run.Line), strings.Join(run.Args, ", "))
		}
	}
	mb := mod.MainBlock
	mainBlock := fmt.Sprintf("if __name__ == \"__main__\":\n    app = %s()\n    try:\n        app.wrapped_run()\n    except KeyboardInterrupt:\n        app.stop()", r.class)
	switch {
	case !mb.Present:
		r.fail(fmt.Sprintf("%s: no if __name__ == \"__main__\": block: the daemon runs python -m %s, which would do nothing", file, r.module),
			"end "+file+" with:\n"+mainBlock)
	case !mb.CallsWrappedRun:
		r.fail(fmt.Sprintf("%s: the __main__ block does not call wrapped_run(): the app would not connect to the robot", at(file, mb.Line)),
			"make it:\n"+mainBlock)
	case !mb.HandlesKeyboardInterrupt:
		r.fail(fmt.Sprintf("%s: the __main__ block does not catch KeyboardInterrupt: a second Ctrl-C or SIGINT ends the app with a traceback", at(file, mb.Line)),
			"make it:\n"+mainBlock)
	default:
		r.ok("%s: __main__ block calls wrapped_run() and stops on KeyboardInterrupt", at(file, mb.Line))
	}
}

// checkReadme checks README.md's front matter: valid YAML, a title, the robot_python_app tag.
func checkReadme(r *checkReport, dir string) {
	example := "---\ntitle: My App\ntags:\n  - robot\n  - " + apps.AppTag + "\n---"
	data, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		r.fail("README.md is missing: the space's card (title, tags) is its front matter", "add README.md starting with:\n"+example)
		return
	}
	text, first, err := card.Split(data)
	var fe *card.Error
	switch {
	case errors.Is(err, card.ErrNoCard):
		r.fail("README.md has no front matter (a block between --- lines at the very top)", "start README.md with:\n"+example)
		return
	case errors.As(err, &fe):
		r.fail(fmt.Sprintf("README.md:%d: %s", fe.Line, fe.Msg), "close the front matter with a line holding only ---")
		return
	case err != nil:
		r.fail("README.md: "+err.Error(), "")
		return
	}
	doc, err := card.Parse(text, first)
	if errors.As(err, &fe) {
		r.fail(fmt.Sprintf("README.md:%d: front matter is not valid YAML: %s", fe.Line, fe.Msg),
			"fix the YAML on that line (run robot-app-assistant check --help for the YAML that check reads)")
		return
	}
	if err != nil {
		r.fail("README.md: front matter: "+err.Error(), "")
		return
	}
	if doc == nil || doc.Kind != yaml.MappingNode {
		line := first
		kind := "empty"
		if doc != nil {
			line, kind = doc.Line, "a "+cardKind(doc)
		}
		r.fail(fmt.Sprintf("README.md:%d: front matter is %s, not keys and values", line, kind), "write it as:\n"+example)
		return
	}
	r.ok("README.md: front matter is valid YAML")
	title := cardField(doc, "title")
	switch {
	case title == nil:
		r.fail("README.md: front matter has no title", "add a line title: <the app's name for people> to the front matter")
	case title.Kind != yaml.ScalarNode || title.Tag == "!!null" || strings.TrimSpace(title.Value) == "":
		r.fail(fmt.Sprintf("README.md:%d: title is empty or not text", title.Line), "give the title a value: title: My App")
	default:
		r.ok("README.md: title %q", title.Value)
	}
	tags := cardField(doc, "tags")
	switch {
	case tags == nil:
		r.fail("README.md: front matter has no tags: the app store lists only spaces tagged "+apps.AppTag,
			"add to the front matter:\ntags:\n  - robot\n  - "+apps.AppTag)
	case tags.Kind != yaml.SequenceNode:
		r.fail(fmt.Sprintf("README.md:%d: tags is a %s, not a list", tags.Line, cardKind(tags)),
			"write the tags as a list:\ntags:\n  - robot\n  - "+apps.AppTag)
	default:
		found := slices.ContainsFunc(tags.Content, func(n *yaml.Node) bool {
			return n.Kind == yaml.ScalarNode && n.Value == apps.AppTag
		})
		if found {
			r.ok("README.md: tagged %s", apps.AppTag)
		} else {
			r.fail(fmt.Sprintf("README.md:%d: tags do not include %s: the app store would not list the app", tags.Line, apps.AppTag),
				"add the line   - "+apps.AppTag+"   under tags:")
		}
	}
}

func isFile(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.Mode().IsRegular()
}

func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

// tail returns the last n non-empty lines of s.
func tail(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// cardField returns the value of key in a mapping node of a card, or nil.
func cardField(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// cardKind names a node's kind for check's messages: "mapping", "list" or "scalar".
func cardKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "scalar"
}
