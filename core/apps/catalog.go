package apps

import (
	"cmp"
	"context"
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

// Catalog lists the apps published on the hub: the spaces tagged robot_python_app, fetched with
// core/hub's client (<hub>/api/spaces?filter=robot_python_app&full=true) and cached.
type Catalog struct {
	HubURL string
	Client *http.Client
	TTL    time.Duration

	mu      sync.Mutex
	fetched time.Time
	apps    []AppInfo
}

// List returns the catalog, from the cache when it is fresh. On a fetch error it returns the
// stale cache (possibly empty) with the error.
func (c *Catalog) List(ctx context.Context, fresh bool) ([]AppInfo, error) {
	if c == nil || c.HubURL == "" {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !fresh && !c.fetched.IsZero() && time.Since(c.fetched) < c.TTL {
		return c.apps, nil
	}
	apps, err := c.fetch(ctx)
	if err != nil {
		return c.apps, err
	}
	c.apps, c.fetched = apps, time.Now()
	return apps, nil
}

func (c *Catalog) fetch(ctx context.Context) ([]AppInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// One attempt: the daemon answers from its stale cache rather than keep a page waiting.
	opts := []hub.Option{hub.WithRetry(hub.RetryPolicy{MaxAttempts: 1})}
	if c.Client != nil {
		opts = append(opts, hub.WithHTTPClient(c.Client))
	}
	client, err := hub.New(c.HubURL, opts...)
	if err != nil {
		return nil, fmt.Errorf("the app catalog's hub: %w", err)
	}
	spaces, err := client.ListSpaces(ctx, hub.SpaceQuery{Filter: []string{AppTag}})
	if err != nil {
		// %v: a hub failure is the daemon's 500, whatever the hub's own status was.
		return nil, fmt.Errorf("fetching the app catalog from %s: %v", strings.TrimRight(c.HubURL, "/"), err)
	}
	var apps []AppInfo
	for _, s := range spaces {
		author, name, ok := strings.Cut(s.ID, "/")
		if !ok || name == "" {
			continue
		}
		author = cmp.Or(s.Author, author)
		card := func(key string) string { v, _ := s.CardData[key].(string); return v }
		apps = append(apps, AppInfo{
			Name: name, SourceKind: SourceHubSpace, Description: card("short_description"), URL: client.SpaceGitURL(s.ID),
			Extra: AppExtra{Title: card("title"), Author: author, Emoji: card("emoji")},
		})
	}
	return apps, nil
}

// Lookup finds an app by name in a fresh catalog.
func (c *Catalog) Lookup(ctx context.Context, name string) (AppInfo, error) {
	if c == nil || c.HubURL == "" {
		return AppInfo{}, fault.NotFoundf("App '%s' is not installed and no hub catalog is configured", name)
	}
	apps, err := c.List(ctx, true)
	if err != nil {
		return AppInfo{}, err
	}
	for _, a := range apps {
		if a.Name == name || strings.ReplaceAll(a.Name, "-", "_") == name {
			return a, nil
		}
	}
	return AppInfo{}, fault.NotFoundf("App '%s' is not in the catalog of %s", name, c.HubURL)
}
