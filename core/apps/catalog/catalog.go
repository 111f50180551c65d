// Package catalog is the app store of the robot daemon: the hub's spaces tagged robot_python_app,
// listed through core/hub and cached. core/apps offers them beside the installed apps and
// installs them; this package knows only the hub's listing.
package catalog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/hub"
)

// AppTag is the README tag that makes a hub space an app of the catalog.
const AppTag = "robot_python_app"

// App is one app of the catalog: a space of the hub, as its card describes it.
type App struct {
	Name        string // the space's name: "wave" of alice/wave
	SpaceID     string // "alice/wave"
	Description string // the card's short_description
	GitURL      string // where to clone the space from
	Title       string
	Author      string
	Emoji       string
}

// Catalog lists the hub's spaces tagged robot_python_app, through core/hub, cached for TTL.
type Catalog struct {
	HubURL string
	Client *http.Client
	TTL    time.Duration

	mu      sync.Mutex
	fetched time.Time
	apps    []App
}

// Invalidate makes the next List fetch the catalog afresh.
func (c *Catalog) Invalidate() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.fetched = time.Time{}
	c.mu.Unlock()
}

// List returns the catalog, cached when fresh; on a fetch error, the stale cache and the error.
func (c *Catalog) List(ctx context.Context, fresh bool) ([]App, error) {
	if c == nil || c.HubURL == "" {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !fresh && !c.fetched.IsZero() && time.Since(c.fetched) < c.TTL {
		return c.apps, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// One attempt: the daemon answers from its stale cache rather than keep a page waiting.
	opts := []hub.Option{hub.WithRetry(hub.RetryPolicy{MaxAttempts: 1})}
	if c.Client != nil {
		opts = append(opts, hub.WithHTTPClient(c.Client))
	}
	client, err := hub.New(c.HubURL, opts...)
	if err != nil {
		return c.apps, fmt.Errorf("the app catalog's hub: %w", err)
	}
	spaces, err := client.ListSpaces(ctx, hub.SpaceQuery{Filter: []string{AppTag}})
	if err != nil {
		return c.apps, hubFailure(strings.TrimRight(c.HubURL, "/"), err)
	}
	var apps []App
	for _, s := range spaces {
		author, name, ok := strings.Cut(s.ID, "/")
		if !ok || name == "" {
			continue
		}
		author = cmp.Or(s.Author, author)
		card := func(key string) string { v, _ := s.CardData[key].(string); return v }
		apps = append(apps, App{
			Name: name, SpaceID: s.ID, Description: card("short_description"), GitURL: client.SpaceGitURL(s.ID),
			Title: card("title"), Author: author, Emoji: card("emoji"),
		})
	}
	c.apps, c.fetched = apps, time.Now()
	return apps, nil
}

// hubFailure names the hub that failed the catalog and says how, in core's vocabulary: a hub that
// cannot be reached (no answer, or 502/503/504) is unavailable, one that answers with another error
// failed upstream. Neither is the daemon's own fault, whatever status the hub gave.
func hubFailure(hubURL string, err error) error {
	var te *hub.TransportError
	if errors.As(err, &te) || errors.Is(err, fault.ErrUnavailable) || ctxDone(err) {
		return fault.Unavailablef("the app catalog: the hub %s cannot be reached: %v", hubURL, err)
	}
	return fault.New(fault.Upstream, "the app catalog: the hub %s failed the listing: %v", hubURL, err)
}

func ctxDone(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}
