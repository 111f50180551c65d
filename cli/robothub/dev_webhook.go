package main

import (
	"context"
	"net"
	"net/url"

	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/hubemu"
)

// repointDevWebhook makes the dev user's webhook to an earlier run's receiver deliver to this run's
// (hookURL) before Bootstrap looks for one: `robothub dev --receiver-addr` on another port, on the
// same data dir, made a second webhook while the first kept retrying the old port (issue 24). A
// webhook to this machine's robot-update route on another port is the bootstrap's; one is re-pointed
// (its secret set to this run's), the others are deleted. It returns how many it changed.
func repointDevWebhook(ctx context.Context, emu *hubemu.Emulator, user, hookURL, secret string) (int, error) {
	users, err := emu.Users(ctx)
	if err != nil {
		return 0, err
	}
	userID := ""
	for _, u := range users {
		if u.Name == user {
			userID = u.ID
		}
	}
	if userID == "" {
		return 0, nil // a fresh hub: Bootstrap makes the webhook
	}
	hooks, err := emu.Webhooks(ctx, userID)
	if err != nil {
		return 0, err
	}
	current := false
	var stale []*hubemu.Webhook
	for _, w := range hooks {
		switch {
		case w.URL == hookURL:
			current = true
		case isDevUpdateHook(w.URL):
			stale = append(stale, w)
		}
	}
	changed := 0
	for _, w := range stale {
		if !current {
			if _, err := emu.UpdateWebhook(ctx, userID, w.ID, hubemu.WebhookInput{URL: &hookURL, Secret: &secret}); err != nil {
				return changed, err
			}
			current = true
		} else if err := emu.DeleteWebhook(ctx, userID, w.ID); err != nil {
			return changed, err
		}
		changed++
	}
	return changed, nil
}

// isDevUpdateHook reports whether a webhook URL is a robot-update route of a receiver on this
// machine, as robothub dev makes it.
func isDevUpdateHook(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Path != webhook.RoutePrefix+devUpdateRoute {
		return false
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}
