package main

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/urfave/cli/v2"

	"github.com/robothub/robothub/adapters/python"
	"github.com/robothub/robothub/core/apps"
)

// templates holds one directory per template. Names and contents carry placeholders:
// __APP_NAME__, __APP_NAME_UPPER__, __CLASS_NAME__, __DIST_NAME__, __TITLE__ and __WEB_PORT__.
//
//go:embed all:templates
var templates embed.FS

// templateNames are the templates create offers, the default first.
var templateNames = []string{"default", "conversation"}

// defaultWebPort is where a generated app serves its web page.
const defaultWebPort = 8042

func createCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "create",
		Usage:     "create a robot app package from a template",
		ArgsUsage: "<app_name> <destination>",
		Description: `Writes the package into <destination>/<app_name>: index.html and style.css (the space's
landing page), pyproject.toml (with the robot_apps entry point), README.md (tags robot and
robot_python_app), and the Python package <app_name>/ with __init__.py, main.py and static/.
The app name must be a Python identifier: letters, digits and underscores.

Templates:
  default        a minimal app: waves the antennas, with a settings page (a POST route)
  conversation   talks with an OpenAI-compatible chat API: speech in and out, tools that move
                 the head and antennas and play sounds, speech wobble blended over the base pose`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "template", Value: "default", Usage: "default or conversation"},
			&cli.IntFlag{Name: "web-port", Value: defaultWebPort, Usage: "port of the app's web page (custom_app_url)"},
			&cli.BoolFlag{Name: "publish", Usage: "publish the app to a hub space right after creating it"},
			&cli.BoolFlag{Name: "private", Usage: "with --publish: create the space private"},
			&cli.StringFlag{Name: "token", Usage: "with --publish: hub token with write permission (default $HF_TOKEN, then the token file)"},
			// publish's check options, so that the command the README shows for a machine without a
			// package index (--python /usr/bin/python3 --system-site-packages) works here too.
			&cli.StringFlag{Name: "python", Usage: "with --publish: the Python interpreter check uses (default $" + envPython + ", then python3)"},
			&cli.BoolFlag{Name: "system-site-packages", Usage: "with --publish: check's venvs see the interpreter's own packages (default $" + envSystemSite + ")"},
			&cli.StringSliceFlag{Name: "wheel-dir", Usage: "with --publish: offline wheels for check's install (default " + defaultWheelDir + ")"},
		},
		OnUsageError: onUsageError,
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return usagef("create needs <app_name> and <destination>, got %d argument(s)", c.NArg())
			}
			name, dest := c.Args().Get(0), c.Args().Get(1)
			if err := validateAppName(name); err != nil {
				return usagef("%v", err)
			}
			tmpl := c.String("template")
			if !slices.Contains(templateNames, tmpl) {
				return usagef("--template: %q is not one of %s", tmpl, strings.Join(templateNames, ", "))
			}
			port := c.Int("web-port")
			if port < 1 || port > 65535 {
				return usagef("--web-port: %d is not a port number (1-65535)", port)
			}
			if !c.Bool("publish") {
				for _, f := range []string{"private", "token", "python", "system-site-packages", "wheel-dir"} {
					if c.IsSet(f) {
						return usagef("--%s only applies with --publish", f)
					}
				}
			}
			dir, err := createApp(dest, tmpl, namesFor(name, port))
			if err != nil {
				return err
			}
			printCreated(e, dir, name, tmpl)
			if !c.Bool("publish") {
				return nil
			}
			fmt.Fprintln(e.stdout)
			err = publishApp(c.Context, e, publishOptions{
				dir: dir, token: c.String("token"), private: c.Bool("private"), message: "Create " + name,
				check: checkOptionsFrom(c, e, dir),
			})
			if err != nil {
				// The folder is this run's own, untouched since: kept, it would make the same
				// command refuse to run again ("already exists") once the problem is fixed.
				if rmErr := os.RemoveAll(dir); rmErr != nil {
					return fmt.Errorf("%w\n(%s stays: removing it failed: %v; remove it, or publish it with robot-app-assistant publish %s)", err, dir, rmErr, dir)
				}
				return fmt.Errorf("%w\n(nothing was kept: %s is removed, so that the same command can run again once this is fixed)", err, dir)
			}
			return nil
		},
	}
}

// appNames are the names a template is filled with.
type appNames struct {
	App     string // the module and entry-point name: my_app
	Class   string // the app class: MyApp
	Dist    string // the Python distribution: my-app (PEP 508: no leading or trailing '-')
	Title   string // for people: My App
	WebPort int
}

func namesFor(app string, webPort int) appNames {
	var class, title []string
	for _, word := range strings.Split(app, "_") {
		if word == "" {
			continue
		}
		r := []rune(word)
		capitalized := string(unicode.ToUpper(r[0])) + string(r[1:])
		class = append(class, capitalized)
		title = append(title, capitalized)
	}
	n := appNames{App: app, Class: strings.Join(class, ""), Dist: strings.Trim(strings.ReplaceAll(app, "_", "-"), "-"), Title: strings.Join(title, " "), WebPort: webPort}
	if n.Class == "" || unicode.IsDigit([]rune(n.Class)[0]) {
		n.Class = "App" + n.Class
	}
	return n
}

// pythonKeywords cannot name a module.
var pythonKeywords = []string{
	"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
	"def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in",
	"is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
}

// validateAppName says what is wrong with an app name, or nil. The name becomes a Python module,
// the entry point's name and the hub space's name.
func validateAppName(name string) error {
	fix := "use letters, digits and underscores, starting with a letter, e.g. my_robot_app"
	switch {
	case name == "":
		return fmt.Errorf("app name is empty: %s", fix)
	case strings.Contains(name, "-"):
		return fmt.Errorf("app name %q is not a Python identifier: it contains '-'; use '_' instead (%s)", name, strings.ReplaceAll(name, "-", "_"))
	case !apps.AppNamePattern().MatchString(name):
		return fmt.Errorf("app name %q is not a Python identifier (at most 100 characters): %s", name, fix)
	case !strings.ContainsFunc(name, unicode.IsLetter):
		return fmt.Errorf("app name %q has no letter: %s", name, fix)
	case slices.Contains(pythonKeywords, name):
		return fmt.Errorf("app name %q is a Python keyword: %s", name, fix)
	case name == "robot_sdk":
		return fmt.Errorf("app name %q is the robot SDK's module, which the app would hide: pick another name", name)
	case python.RuntimeModule(name) != "":
		return fmt.Errorf("app name %q is a module of the apps' runtime (%s), which the app would hide (the robot refuses such a package): pick another name", name, python.RuntimeModule(name))
	case pythonStdlibModules()[name]:
		return fmt.Errorf("app name %q is a module of Python's standard library, which the app would hide: pick another name", name)
	}
	return nil
}

// pythonStdlibModules lists the standard library's top-level modules according to python3, or
// nothing when python3 is not there: an app named after one would hide it.
func pythonStdlibModules() map[string]bool {
	// The timeout is generous because a timed-out python3 would let create take a standard-library
	// name (seen with 5 s on a loaded machine).
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	names, _ := python.StdlibModules(ctx, "python3") // none when python3 is not there
	return names
}

// createApp writes template tmpl filled with names into dest/<app>, and returns that directory.
// The package appears whole or not at all: it is written next to its place and renamed.
func createApp(dest, tmpl string, names appNames) (string, error) {
	root := path.Join("templates", tmpl)
	if _, err := fs.Stat(templates, root); err != nil {
		return "", fmt.Errorf("template %s is not built into this program", tmpl)
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return "", fmt.Errorf("destination %s: %w", dest, err)
	}
	absDest, err := filepath.Abs(dest)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(absDest, names.App)
	if _, err := os.Lstat(dir); err == nil {
		return "", fmt.Errorf("%s already exists: pick another destination or app name, or remove it", dir)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	tmp, err := os.MkdirTemp(absDest, "."+names.App+"-creating-")
	if err != nil {
		return "", fmt.Errorf("destination %s: %w", dest, err)
	}
	defer os.RemoveAll(tmp)
	fill := strings.NewReplacer(
		"__APP_NAME_UPPER__", strings.ToUpper(names.App), "__APP_NAME__", names.App, "__CLASS_NAME__", names.Class, "__DIST_NAME__", names.Dist,
		"__TITLE__", names.Title, "__WEB_PORT__", strconv.Itoa(names.WebPort),
	)
	err = fs.WalkDir(templates, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == "__pycache__" {
			return fs.SkipDir
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		target := filepath.Join(tmp, filepath.FromSlash(fill.Replace(rel)))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if strings.HasSuffix(d.Name(), ".pyc") {
			return nil
		}
		data, err := fs.ReadFile(templates, p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, []byte(fill.Replace(string(data))), 0o644)
	})
	if err != nil {
		return "", fmt.Errorf("writing the package: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", fmt.Errorf("moving the package into place: %w", err)
	}
	return dir, nil
}

func printCreated(e *env, dir, name, tmpl string) {
	fmt.Fprintf(e.stdout, "Created app %s in %s (template %s)\n", name, dir, tmpl)
	fmt.Fprintf(e.stdout, "  %s/main.py      the app: its run(robot, stop_event) loop\n", name)
	fmt.Fprintf(e.stdout, "  %s/static/      its web page\n", name)
	fmt.Fprintln(e.stdout, "  pyproject.toml       package metadata and the robot_apps entry point")
	fmt.Fprintln(e.stdout, "  README.md            the space's card: title and tags")
	fmt.Fprintln(e.stdout, "Next:")
	fmt.Fprintf(e.stdout, "  robot-app-assistant check %s\n", dir)
	fmt.Fprintf(e.stdout, "  robot-app-assistant publish %s\n", dir)
}
