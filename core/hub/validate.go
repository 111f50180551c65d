package hub

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/robothub/robothub/core/fault"
)

// ValidationError is a request refused before it was sent: Field names what is wrong ("url",
// "watched[1].type", "secrets.MY_TOKEN"). errors.Is(err, fault.ErrInvalid) is true.
type ValidationError struct {
	Field   string
	Problem string
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return e.Problem
	}
	return e.Field + ": " + e.Problem
}

// Is makes errors.Is(err, fault.ErrInvalid) true.
func (e *ValidationError) Is(target error) bool { return target == fault.ErrInvalid }

func invalid(field, format string, args ...any) *ValidationError {
	return &ValidationError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// ParseWatchedItem parses the CLI form type:name ("model:alice/bert", "org:acme").
func ParseWatchedItem(s string) (WatchedItem, error) {
	typ, name, ok := strings.Cut(s, ":")
	if !ok {
		return WatchedItem{}, invalid("watch", "%q is not type:name (for example model:alice/bert or user:alice); types: %s",
			s, strings.Join(WatchTypes, ", "))
	}
	w := WatchedItem{Type: strings.TrimSpace(typ), Name: strings.TrimSpace(name)}
	if err := CheckWatchedItem("watch", w); err != nil {
		return WatchedItem{}, err
	}
	return w, nil
}

// CheckWatchedItem checks one watched item; field names it in the error ("watched[0]"). The local
// hub checks with it too, so that client and emulator refuse the same items.
func CheckWatchedItem(field string, w WatchedItem) error {
	switch {
	case !slices.Contains(WatchTypes, w.Type):
		return invalid(field+".type", "unknown watched type %q: use one of %s", w.Type, strings.Join(WatchTypes, ", "))
	case w.Name == "":
		return invalid(field+".name", "the name of the watched %s is empty", w.Type)
	case strings.ContainsAny(w.Name, " \t\r\n?#"):
		return invalid(field+".name", "watched name %q contains a space, '?' or '#'", w.Name)
	case (w.Type == "user" || w.Type == "org") && strings.Contains(w.Name, "/"):
		return invalid(field+".name", "a %s is a single name such as %q, not %q", w.Type, "alice", w.Name)
	case w.Type == "bucket" && strings.Count(w.Name, "/") != 1:
		return invalid(field+".name", "a bucket is named owner/name, not %q", w.Name)
	case strings.Count(w.Name, "/") > 1 || strings.HasPrefix(w.Name, "/") || strings.HasSuffix(w.Name, "/"):
		return invalid(field+".name", "%q is not a repo name: use owner/name", w.Name)
	}
	return nil
}

func checkWatched(watched []WatchedItem) error {
	if len(watched) == 0 {
		return invalid("watched", "watch at least one item, such as model:alice/bert or user:alice")
	}
	for i, w := range watched {
		if err := CheckWatchedItem(fmt.Sprintf("watched[%d]", i), w); err != nil {
			return err
		}
	}
	return nil
}

// NormalizeDomains checks domains and returns them deduplicated in a stable order. "discussions"
// (the public Python client's spelling) is the same domain as "discussion".
func NormalizeDomains(domains []string) ([]string, error) {
	seen := map[string]bool{}
	for i, d := range domains {
		d = strings.ToLower(strings.TrimSpace(d))
		if d == "discussions" {
			d = "discussion"
		}
		if !slices.Contains(Domains, d) {
			return nil, invalid(fmt.Sprintf("domains[%d]", i), "unknown domain %q: use repo or discussion", domains[i])
		}
		seen[d] = true
	}
	return slices.DeleteFunc(slices.Clone(Domains), func(d string) bool { return !seen[d] }), nil
}

// CheckURL checks a webhook's target URL: absolute http(s) with a host.
func CheckURL(field, s string) error {
	u, err := url.Parse(s)
	switch {
	case s == "":
		return invalid(field, "the URL is empty")
	case err != nil:
		return invalid(field, "%q is not a URL: %v", s, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return invalid(field, "%q is not an absolute http(s) URL (it needs http:// or https:// and a host)", s)
	case u.Host == "":
		return invalid(field, "%q has no host", s)
	}
	return nil
}

// CheckSecret checks a webhook's secret: printable ASCII only, as it travels in a header.
func CheckSecret(s string) error {
	if strings.ContainsFunc(s, func(c rune) bool { return c < 0x20 || c > 0x7e }) {
		return invalid("secret", "the secret may contain printable ASCII characters only")
	}
	return nil
}

// CheckSecrets checks that every name of a secrets (or environment) map is a variable name.
func CheckSecrets(secrets map[string]string) error {
	for _, n := range slices.Sorted(maps.Keys(secrets)) {
		if !IsEnvName(n) {
			return invalid("secrets", "%q is not a valid secret name: use letters, digits and '_', not starting with a digit", n)
		}
	}
	return nil
}

// IsEnvName reports whether s is a variable name: letters, digits and '_', not starting with a digit.
func IsEnvName(s string) bool { return envName().MatchString(s) }

// This package's patterns (here and in card.go, downloads.go, repos.go) are compiled at their first
// use, not when the process starts: one that never checks them (a Lambda's cold start, robothub
// --version) saved 0.5 ms of package init (GODEBUG=inittrace=1).
var (
	envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
	idChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })
)

// CheckID checks an ID (of a webhook, a delivery, a run) before it goes into a request path.
func CheckID(field, id string) error {
	switch {
	case id == "":
		return invalid(field, "the ID is empty")
	case !idChars().MatchString(id):
		return invalid(field, "%q is not a valid ID (letters, digits, '-' and '_' only)", id)
	}
	return nil
}

// Validate checks a create request and returns it normalized (domains deduplicated, "discussions"
// spelled "discussion").
func (r CreateRequest) Validate() (CreateRequest, error) {
	switch {
	case r.URL != "" && r.JobID != "":
		return r, invalid("url", "give a URL or a job ID, not both")
	case r.URL == "" && r.JobID == "":
		return r, invalid("url", "give the URL to send payloads to, or the ID of a source job to run")
	}
	if r.URL != "" {
		if err := CheckURL("url", r.URL); err != nil {
			return r, err
		}
		if len(r.Secrets) > 0 {
			return r, invalid("secrets", "secrets are handed to job runs: they need a job ID, not a URL")
		}
	} else if err := CheckID("job_id", r.JobID); err != nil {
		return r, err
	}
	if err := checkWatched(r.Watched); err != nil {
		return r, err
	}
	err := checkRest(&r.Domains, &r.Secret, r.Secrets)
	return r, err
}

// checkRest checks, in this order, what create and update share: the domains (normalized in
// place), the secret and the secrets.
func checkRest(domains *[]string, secret *string, secrets map[string]string) error {
	if *domains != nil {
		d, err := NormalizeDomains(*domains)
		if err != nil {
			return err
		}
		*domains = d
	}
	if secret != nil {
		if err := CheckSecret(*secret); err != nil {
			return err
		}
	}
	return CheckSecrets(secrets)
}

// Validate checks an update request and returns it normalized.
func (r UpdateRequest) Validate() (UpdateRequest, error) {
	if r.URL == nil && r.Watched == nil && r.Domains == nil && r.Secret == nil && r.JobID == "" && r.Secrets == nil {
		return r, invalid("", "nothing to update: give at least one of url, watched, domains, secret, or a job ID with secrets")
	}
	if r.URL != nil {
		if r.JobID != "" {
			return r, invalid("url", "give a URL or a job ID, not both")
		}
		if err := CheckURL("url", *r.URL); err != nil {
			return r, err
		}
	}
	if r.Secrets != nil && r.JobID == "" {
		return r, invalid("secrets", "secrets are updated together with the job ID (pass the webhook's job ID as well)")
	}
	if r.JobID != "" {
		if err := CheckID("job_id", r.JobID); err != nil {
			return r, err
		}
	}
	if r.Watched != nil {
		if err := checkWatched(r.Watched); err != nil {
			return r, err
		}
	}
	if r.Domains != nil && len(r.Domains) == 0 {
		return r, invalid("domains", "give at least one domain (repo, discussion), or leave domains unchanged")
	}
	err := checkRest(&r.Domains, r.Secret, r.Secrets)
	return r, err
}
