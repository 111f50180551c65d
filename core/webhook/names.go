package webhook

import (
	"fmt"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"sync"
)

// checkName accepts route names made of URL-safe segments: letters, digits, '-', '_', '.', '~',
// separated by single slashes, with no "." or ".." segment.
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("webhook name is empty: give a name such as %q", "say-hello")
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("invalid webhook name %q: empty, '.' and '..' path segments are not allowed", name)
		}
		for _, c := range seg {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.~", c)) {
				return fmt.Errorf("invalid webhook name %q: %q is not allowed; use letters, digits, '-', '_', '.', '~' and '/'", name, c)
			}
		}
	}
	return nil
}

// anonymous matches the compiler's names for function literals: main.main.func1, pkg.glob..func2,
// pkg.(*T).M.func1.2. Compiled at first use (a named handler): a receiver starts without it.
var anonymous = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|\.)func\d+(\.\d+)*$`) })

// funcName returns the Go name of a named function or method value, without its package ("" for nil).
func funcName(fn HandlerFunc) (string, error) {
	full := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
	name := full
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name = name[i+1:] // drop the package name
	}
	name = strings.TrimSuffix(name, "-fm") // a method value: (*T).Method-fm
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i] // a generic instance: f[...]
	}
	if anonymous().MatchString(name) || strings.HasPrefix(name, "glob.") {
		return "", fmt.Errorf("webhook handler %s is an anonymous function and has no name: register it with Add(name, fn)", full)
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:] // (*T).Method -> Method
	}
	return name, nil
}
