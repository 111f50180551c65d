package apps

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// AppTag is the README tag that makes a hub space an app of the catalog.
const AppTag = "robot_python_app"

// Catalog lists the apps published on the hub: the spaces tagged robot_python_app, fetched from
// <hub>/api/spaces?filter=robot_python_app and cached.
type Catalog struct {
	HubURL string
	Client *http.Client
	TTL    time.Duration

	mu      sync.Mutex
	fetched time.Time
	apps    []AppInfo
}

type hubSpace struct {
	ID       string `json:"id"`
	Author   string `json:"author"`
	CardData struct {
		Title            string `json:"title"`
		Emoji            string `json:"emoji"`
		ShortDescription string `json:"short_description"`
	} `json:"cardData"`
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
	base := strings.TrimRight(c.HubURL, "/")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/spaces?filter="+url.QueryEscape(AppTag)+"&full=true", nil)
	if err != nil {
		return nil, err
	}
	client := c.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching the app catalog from %s: %w", base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching the app catalog from %s: %s", base, resp.Status)
	}
	var spaces []hubSpace
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&spaces); err != nil {
		return nil, fmt.Errorf("fetching the app catalog from %s: %w", base, err)
	}
	var apps []AppInfo
	for _, s := range spaces {
		_, name, ok := strings.Cut(s.ID, "/")
		if !ok || name == "" {
			continue
		}
		author := s.Author
		if author == "" {
			author, _, _ = strings.Cut(s.ID, "/")
		}
		apps = append(apps, AppInfo{
			Name: name, SourceKind: SourceHubSpace, Description: s.CardData.ShortDescription,
			URL:   base + "/spaces/" + s.ID,
			Extra: AppExtra{Title: s.CardData.Title, Author: author, Emoji: s.CardData.Emoji},
		})
	}
	return apps, nil
}

// Lookup finds an app by name in a fresh catalog.
func (c *Catalog) Lookup(ctx context.Context, name string) (AppInfo, error) {
	if c == nil || c.HubURL == "" {
		return AppInfo{}, notFoundError(fmt.Sprintf("App '%s' is not installed and no hub catalog is configured", name))
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
	return AppInfo{}, notFoundError(fmt.Sprintf("App '%s' is not in the catalog of %s", name, c.HubURL))
}
