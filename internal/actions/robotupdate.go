package actions

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/webhook"
)

// DaemonTokenEnv holds the robot daemon's API token (its --token, or the file it made on first
// start); the receiver sends it when set, and the SDK reads it too.
const DaemonTokenEnv = "ROBOT_DAEMON_TOKEN"

// UpdateResult is the reply of a robot-update action that started updates.
type UpdateResult struct {
	Message string   `json:"message"`
	Apps    []string `json:"apps"`
	Jobs    []string `json:"jobs"`
}

// installedApp is the part of the daemon's AppInfo this action reads.
type installedApp struct {
	Name  string `json:"name"`
	Extra struct {
		Source   string `json:"source"`
		Revision string `json:"revision"`
	} `json:"extra"`
}

// robotUpdateAction keeps a robot's apps in step with their spaces: on a push (a repo.content
// update) to a space that an installed app came from, it asks the robot daemon to update the app,
// which reinstalls it at the pushed revision and restarts it if it runs. Other events are
// acknowledged and ignored. The daemon skips an app already at the revision, so an event delivered
// twice updates once.
func (b *Builder) robotUpdateAction(route, daemon string) (webhook.HandlerFunc, error) {
	u, err := url.Parse(daemon)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("route %s: robot-update: %q is not the robot daemon's http(s) URL, such as http://127.0.0.1:8000", route, daemon)
	}
	base := strings.TrimRight(displayURL(u), "/")
	log := b.cfg.Logger.With("route", route, "daemon", base)
	call := func(ctx context.Context, method, path string, in, out any) error {
		var body io.Reader
		if in != nil {
			buf, _ := json.Marshal(in)
			body = bytes.NewReader(buf)
		}
		req, err := http.NewRequestWithContext(ctx, method, base+path, body)
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		if b.cfg.DaemonToken != "" {
			req.Header.Set("Authorization", "Bearer "+b.cfg.DaemonToken)
		}
		resp, err := b.cfg.ForwardClient.Do(req)
		if err != nil {
			return fmt.Errorf("robot daemon at %s: %s", base, transportErr(err))
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		if resp.StatusCode != http.StatusOK {
			var e struct {
				Detail string `json:"detail"`
			}
			_ = json.Unmarshal(data, &e)
			return fmt.Errorf("robot daemon %s %s: %s %s", method, path, resp.Status, e.Detail)
		}
		return json.Unmarshal(data, out)
	}

	return func(ctx context.Context, p *webhook.Payload, _ http.Header) (any, error) {
		if !p.Event.Is(webhook.ScopeRepoContent, webhook.ActionUpdate) || p.Repo.Type != "space" {
			return fmt.Sprintf("ignored: %s %s on %s %s is not a push to a space", p.Event.Scope, p.Event.Action, p.Repo.Type, p.Repo.Name), nil
		}
		var installed []installedApp
		if err := call(ctx, http.MethodGet, "/api/apps/list", nil, &installed); err != nil {
			return nil, fault.New(fault.Upstream, "%s", err.Error())
		}
		sources := map[string][]string{} // source -> apps installed from it
		var order []string
		for _, a := range installed {
			if fromSpace(a.Extra.Source, p.Repo.Name) {
				if _, seen := sources[a.Extra.Source]; !seen {
					order = append(order, a.Extra.Source)
				}
				sources[a.Extra.Source] = append(sources[a.Extra.Source], a.Name)
			}
		}
		if len(order) == 0 {
			// Maybe a new app: the robot's app store must list it now, not when its cache expires.
			var catalog []installedApp
			if err := call(ctx, http.MethodGet, "/api/apps/list-available/hf_space?refresh=true", nil, &catalog); err != nil {
				log.Warn("refreshing the robot's app store", "space", p.Repo.Name, "err", err)
			}
			return fmt.Sprintf("ignored: no app on the robot comes from space %s (its app store was refreshed)", p.Repo.Name), nil
		}
		res := UpdateResult{}
		for _, src := range order {
			var job struct {
				JobID string `json:"job_id"`
			}
			if err := call(ctx, http.MethodPost, "/api/apps/update", map[string]string{"url": src, "revision": p.Repo.HeadSha}, &job); err != nil {
				return nil, fault.New(fault.Upstream, "%s", err.Error())
			}
			res.Apps = append(res.Apps, sources[src]...)
			res.Jobs = append(res.Jobs, job.JobID)
		}
		rev := p.Repo.HeadSha
		if rev == "" {
			rev = "its latest commit"
		}
		res.Message = fmt.Sprintf("updating %s to %s", strings.Join(res.Apps, ", "), rev)
		log.Info("robot update started", "space", p.Repo.Name, "revision", p.Repo.HeadSha, "apps", res.Apps, "jobs", res.Jobs)
		return webhook.Response{Status: http.StatusAccepted, Body: res}, nil
	}, nil
}

// fromSpace reports whether an app's install source is the space named owner/name: a URL whose path
// is .../spaces/owner/name (with or without .git). The host is not compared: a robot may reach the
// hub under another name than the one the hub calls itself.
func fromSpace(source, name string) bool {
	u, err := url.Parse(source)
	if err != nil || name == "" {
		return false
	}
	path := strings.TrimSuffix(strings.TrimRight(u.Path, "/"), ".git")
	return strings.HasSuffix(path, "/spaces/"+name)
}
