package actions

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/daemonclient"
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

// RobotUpdate is the robot-update action, for Config.RobotUpdate: a binary that refers to it links
// the daemon's client.
func RobotUpdate(b *Builder, route, daemonURL string) (webhook.HandlerFunc, error) {
	return b.robotUpdateAction(route, daemonURL)
}

// robotUpdateAction keeps a robot's apps in step with their spaces: on a push (a repo.content
// update) to a space that an installed app came from, it asks the robot daemon to update the app,
// which reinstalls it at the pushed revision and restarts it if it runs. Other events are
// acknowledged and ignored. The daemon skips an app already at the revision, so an event delivered
// twice updates once.
func (b *Builder) robotUpdateAction(route, daemonURL string) (webhook.HandlerFunc, error) {
	u, err := url.Parse(daemonURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("route %s: robot-update: %q is not the robot daemon's http(s) URL, such as http://127.0.0.1:8000", route, daemonURL)
	}
	base := strings.TrimRight(displayURL(u), "/")
	log := b.cfg.Logger.With("route", route, "daemon", base)
	// The generated builders and parsers one by one, not daemonapi's Client: the receivers that
	// have this action then link these three routes, not all of them.
	daemon := daemonclient.New(base, daemonclient.Options{Token: b.cfg.DaemonToken, HTTPClient: b.cfg.ForwardClient})
	// failed words an error without the daemon's URL as given, which may hold a secret.
	failed := func(err error) error { return fmt.Errorf("robot daemon at %s: %s", base, transportErr(err)) }

	return func(ctx context.Context, p *webhook.Payload, _ http.Header) (any, error) {
		if !p.Event.Is(webhook.ScopeRepoContent, webhook.ActionUpdate) || p.Repo.Type != "space" {
			return fmt.Sprintf("ignored: %s %s on %s %s is not a push to a space", p.Event.Scope, p.Event.Action, p.Repo.Type, p.Repo.Name), nil
		}
		list, err := daemonclient.Call(ctx, daemon, daemonclient.NewGetApiAppsListRequest, daemonclient.ParseGetApiAppsListResponse)
		if err != nil {
			return nil, fault.New(fault.Upstream, "%s", failed(err))
		}
		if list.JSON200 == nil {
			return nil, fault.New(fault.Upstream, "%s", daemonclient.Unexpected(list.HTTPResponse, list.Body))
		}
		sources := map[string][]string{} // source -> apps installed from it
		var order []string
		for _, a := range *list.JSON200 {
			src := deref(a.Extra.Source)
			if fromSpace(src, p.Repo.Name) {
				if _, seen := sources[src]; !seen {
					order = append(order, src)
				}
				sources[src] = append(sources[src], a.Name)
			}
		}
		if len(order) == 0 {
			// Maybe a new app: the robot's app store must list it now, not when its cache expires.
			refresh := true
			catalog, err := daemonclient.Call(ctx, daemon, func(server string) (*http.Request, error) {
				return daemonclient.NewGetApiAppsListAvailableSourceKindRequest(server, string(daemonclient.SourceKindHfSpace),
					&daemonclient.GetApiAppsListAvailableSourceKindParams{Refresh: &refresh})
			}, daemonclient.ParseGetApiAppsListAvailableSourceKindResponse)
			if err != nil {
				err = failed(err)
			} else if catalog.JSON200 == nil {
				err = daemonclient.Unexpected(catalog.HTTPResponse, catalog.Body)
			}
			if err != nil {
				log.Warn("refreshing the robot's app store", "space", p.Repo.Name, "err", err)
			}
			return fmt.Sprintf("ignored: no app on the robot comes from space %s (its app store was refreshed)", p.Repo.Name), nil
		}
		res := UpdateResult{}
		for _, src := range order {
			body := daemonclient.PostApiAppsUpdateJSONRequestBody{Url: src}
			if p.Repo.HeadSha != "" {
				body.Revision = &p.Repo.HeadSha
			}
			job, err := daemonclient.Call(ctx, daemon, func(server string) (*http.Request, error) {
				return daemonclient.NewPostApiAppsUpdateRequest(server, body)
			}, daemonclient.ParsePostApiAppsUpdateResponse)
			if err != nil {
				return nil, fault.New(fault.Upstream, "%s", failed(err))
			}
			if job.JSON200 == nil {
				return nil, fault.New(fault.Upstream, "%s", daemonclient.Unexpected(job.HTTPResponse, job.Body))
			}
			res.Apps = append(res.Apps, sources[src]...)
			res.Jobs = append(res.Jobs, job.JSON200.JobId)
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

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
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
