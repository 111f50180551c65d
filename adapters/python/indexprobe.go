package python

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpproxy"

	"github.com/robothub/robothub/core/apps"
)

// An unreachable package index cost every pip command that needed it pip's retries: 5 attempts
// with backoff per project page, 34-48 s of a first daemon start with no network (issue 33), and
// again at each job. The index is probed once, with one quick request, before the first command
// that needs it; while it is known unreachable, pip runs with no retries and a short timeout
// (local wheel directories still count), and the log says so in one line with the way around it.
// The verdict is kept for indexRecheck, not for ever: a robot that booted before its network came
// up must not do without its index until the next restart.
const (
	indexProbeTimeout = 5 * time.Second
	indexRecheck      = 10 * time.Minute
)

// IndexUnreachableHint is the way around a package index that cannot be reached.
const IndexUnreachableHint = "without an index, use the system's packages (--python /usr/bin/python3 --system-site-packages) " +
	"or wheel directories (--offline --wheel-dir DIR)"

type indexVerdict struct {
	err error // nil: reachable
	at  time.Time
}

var (
	indexMu       sync.Mutex
	indexVerdicts = map[string]indexVerdict{} // by index URL
)

// indexURL is the index pip's commands of this venv use: Source.IndexURL, else PIP_INDEX_URL in
// their environment, else pip's configuration (pip.conf), else PyPI.
func (v *Venv) indexURL(ctx context.Context, env []string) string {
	if v.Source.IndexURL != "" {
		return v.Source.IndexURL
	}
	for i := len(env) - 1; i >= 0; i-- {
		if u, ok := strings.CutPrefix(env[i], "PIP_INDEX_URL="); ok && u != "" {
			return u
		}
	}
	// pip's own reading of its configuration files: they have sections, environment-specific
	// files and precedence rules that only pip knows in full. A Python's start-up costs 0.3-0.5 s:
	// asked once per interpreter and configuration place.
	key := strings.Join([]string{v.Python(), envValue(env, "PIP_CONFIG_FILE"), envValue(env, "HOME"), envValue(env, "XDG_CONFIG_HOME")}, "\x00")
	if u, ok := configuredIndex.Load(key); ok {
		return u.(string)
	}
	u := pipConfiguredIndex(ctx, v, env)
	if ctx.Err() == nil {
		configuredIndex.Store(key, u)
	}
	return u
}

// configuredIndex holds pipConfiguredIndex's answers.
var configuredIndex sync.Map

// pipConfiguredIndex is the index-url of pip's configuration, else PyPI.
func pipConfiguredIndex(ctx context.Context, v *Venv, env []string) string {
	cmd := exec.CommandContext(ctx, v.Python(), v.pip("config", "list")...)
	cmd.Env = env
	if out, err := cmd.Output(); err == nil {
		found := ""
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		for sc.Scan() {
			key, value, ok := strings.Cut(sc.Text(), "=")
			if ok && (key == "global.index-url" || key == "install.index-url") {
				found = strings.Trim(value, `'"`)
			}
		}
		if found != "" {
			return found
		}
	}
	return "https://pypi.org/simple"
}

// indexArgsFor is what pip's commands that read the index add: nothing while the index answers;
// while it is known unreachable, no retries and a short timeout, with one line in log saying so,
// and the error that says so (nil when it answers). Offline sources reach no index.
func (v *Venv) indexArgsFor(ctx context.Context, log io.Writer, env []string) ([]string, error) {
	if v.Source.Offline {
		return nil, nil
	}
	index := v.indexURL(ctx, env)
	if err := probeIndex(ctx, index, env); err != nil {
		fmt.Fprintf(log, "The package index %s cannot be reached (%v): pip tries it once, without retries; %s\n",
			apps.RedactURL(index), err, IndexUnreachableHint)
		unreachable := fmt.Errorf("the package index %s cannot be reached (%v); %s", apps.RedactURL(index), err, IndexUnreachableHint)
		return []string{"--retries", "0", "--timeout", "5"}, unreachable
	}
	return nil, nil
}

// probeIndex says whether index answers at all (any HTTP status does), through the proxies of
// env as pip would, asking at most once per indexRecheck.
func probeIndex(ctx context.Context, index string, env []string) error {
	indexMu.Lock()
	defer indexMu.Unlock() // one probe at a time: the others wait for its verdict
	if v, ok := indexVerdicts[index]; ok && time.Since(v.at) < indexRecheck {
		return v.err
	}
	err := probe(ctx, index, env)
	if ctx.Err() != nil {
		return nil // cancelled, not a verdict
	}
	indexVerdicts[index] = indexVerdict{err: err, at: time.Now()}
	return err
}

// envValue is name's value in env (the last one, as exec does), or "".
func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}

func probe(ctx context.Context, index string, env []string) error {
	u, err := url.Parse(index)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil // pip's to complain about; a file: index needs no network
	}
	lookup := func(name string) string { return cmp.Or(envValue(env, name), envValue(env, strings.ToLower(name))) }
	proxies := httpproxy.Config{HTTPProxy: lookup("HTTP_PROXY"), HTTPSProxy: lookup("HTTPS_PROXY"), NoProxy: lookup("NO_PROXY")}
	proxyFunc := proxies.ProxyFunc()
	client := &http.Client{
		Timeout:   indexProbeTimeout,
		Transport: &http.Transport{Proxy: func(r *http.Request) (*url.URL, error) { return proxyFunc(r.URL) }},
		// A redirect is an answer: the index is there.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, index, nil)
	if err != nil {
		return nil
	}
	resp, err := client.Do(req)
	if err != nil {
		// The error names the URL, which may hold credentials: say what failed without it.
		if ue, ok := errors.AsType[*url.Error](err); ok {
			return ue.Err
		}
		return err
	}
	resp.Body.Close()
	return nil
}
