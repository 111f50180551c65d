package fleet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/hub"
)

// HubCheck is the Hub a robot trusts, through core/hub: the hub each app was installed from (its
// source's address), asked whether a revision exists there and is the space's head. The token
// goes only to the daemon's own hub (TokenHub), as the daemon's installs send it.
type HubCheck struct {
	TokenHub string // the daemon's hub URL
	Token    string // its token, for private spaces; never sent to another hub
	Client   *http.Client
}

// Check implements Hub.
func (h HubCheck) Check(ctx context.Context, source, space, revision string) error {
	base, ok := HubOf(source)
	if !ok {
		return fmt.Errorf("%s is not a hub space URL", source)
	}
	opts := []hub.Option{hub.WithRetry(hub.RetryPolicy{MaxAttempts: 3})}
	if h.Client != nil {
		opts = append(opts, hub.WithHTTPClient(h.Client))
	}
	if h.Token != "" && strings.TrimRight(h.TokenHub, "/") == base {
		opts = append(opts, hub.WithToken(h.Token))
	}
	c, err := hub.New(base, opts...)
	if err != nil {
		return err
	}
	// The common case takes one request: the announced revision is the head.
	head, err := c.SpaceInfo(ctx, space)
	if err != nil {
		return err
	}
	if head.SHA == revision {
		return nil
	}
	at, err := c.SpaceAt(ctx, space, revision)
	switch {
	case errors.Is(err, fault.ErrNotFound) || errors.Is(err, fault.ErrInvalid):
		return fmt.Errorf("%w: %s has no revision %s of %s; nothing was installed", ErrNotOnHub, base, revision, space)
	case err != nil:
		return err
	case at.SHA != revision:
		return fmt.Errorf("%w: %s resolves %s of %s to %s; nothing was installed", ErrNotOnHub, base, revision, space, at.SHA)
	}
	return fmt.Errorf("%w: %s is at %s; its announcement follows", ErrSuperseded, space, head.SHA)
}
