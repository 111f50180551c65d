package hubemu

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/robothub/robothub/core/hub"
)

// Defaults of an Emulator.
const (
	DefaultPublicURL    = "http://127.0.0.1:7861"
	DefaultTriggerLimit = 1000 // deliveries per webhook per 24 hours, as on the public hub
)

// Config configures an Emulator. The zero value is an in-memory emulator with the defaults.
type Config struct {
	// PublicURL is the emulator's address as clients see it; payload links (repo.url) start with it.
	PublicURL string
	// TriggerLimit caps the deliveries of one webhook in any 24 hours; over it, deliveries are
	// recorded as rate_limited and not sent. 0 is DefaultTriggerLimit; negative means no limit.
	TriggerLimit int
	// AllowJobs turns job webhooks on. A job webhook runs a command on this machine, as the
	// emulator's user, whenever an event matches, so it is off unless asked for (`hub serve
	// --allow-jobs`; `robothub dev` sets it): without it, source jobs and job webhooks cannot be
	// made (403), and deliveries of job webhooks stored earlier fail without running anything.
	AllowJobs bool
	// Logger receives the emulator's logs. Default slog.Default().
	Logger *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// Timeouts of the HTTP server that serves Handler (hub serve, robothub dev): a client that sends
// its headers and then stalls, or never finishes its body, is dropped after DefaultReadTimeout
// (the whole request, a push's pack included: raise it with hub serve --read-timeout for a very
// large push over a slow link).
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 2 * time.Minute
	DefaultIdleTimeout       = 2 * time.Minute
)

// Emulator is the local hub's services: accounts, webhooks, events and the deliveries they cause,
// source jobs and discussions (spaces, git repositories, are internal/hubemu/spaces). It keeps
// everything in a Store; a Waker (the delivery dispatcher) is told when there is something to send.
type Emulator struct {
	db           Store
	waker        Waker
	publicURL    string
	triggerLimit int
	allowJobs    bool
	log          *slog.Logger
	now          func() time.Time
}

// New returns the hub's services on a store, with the dispatcher that sends deliveries (nil: none
// is told).
func New(cfg Config, db Store, w Waker) *Emulator {
	e := &Emulator{
		db:           db,
		waker:        w,
		publicURL:    strings.TrimRight(cfg.PublicURL, "/"),
		triggerLimit: cfg.TriggerLimit,
		allowJobs:    cfg.AllowJobs,
		log:          cfg.Logger,
		now:          cfg.Now,
	}
	if e.publicURL == "" {
		e.publicURL = DefaultPublicURL
	}
	if e.triggerLimit == 0 {
		e.triggerLimit = DefaultTriggerLimit
	}
	if e.log == nil {
		e.log = slog.Default()
	}
	if e.now == nil {
		e.now = time.Now
	}
	return e
}

// PublicURL returns the address payload links start with.
func (e *Emulator) PublicURL() string { return e.publicURL }

// BootstrapConfig is what Bootstrap sets up on an emulator.
type BootstrapConfig struct {
	User          string            // the user to make when there is none; default "local"
	WebhookURL    string            // if set: make sure the user has a webhook to this URL
	WebhookSecret string            // its secret
	Watched       []hub.WatchedItem // what it watches; default the user's own repos (user:<User>)
	Domains       []string          // default both
	// Replaces, if set, recognises the bootstrap webhook of an earlier run by its URL (robothub dev:
	// its receiver's route on this machine, at whatever port that run had). When the user has no
	// webhook to WebhookURL, the first URL webhook it accepts is pointed at WebhookURL, with
	// WebhookSecret, instead of a second one being made: its pending deliveries follow it. Any
	// other webhook it accepts is deleted.
	Replaces func(url string) bool
}

// BootstrapResult says what Bootstrap made.
type BootstrapResult struct {
	User      User
	Token     string   // the new write token, when the user was created now; "" otherwise
	Webhook   *Webhook // the bootstrap webhook, made now or found
	CreatedWH bool     // the webhook was made now
	MovedFrom string   // the URL the webhook had, when Bootstrap pointed it at WebhookURL now
	Removed   int      // other webhooks of earlier runs (cfg.Replaces) deleted now
}

// Bootstrap prepares a fresh emulator for use: with no users yet, it makes one (cfg.User) and a
// write token for it. With cfg.WebhookURL, it makes sure that the user has a webhook to that URL
// (found by URL, or by cfg.Replaces, so that a restart does not make a second one). It is safe to
// call at every start.
func (e *Emulator) Bootstrap(ctx context.Context, cfg BootstrapConfig) (*BootstrapResult, error) {
	if cfg.User == "" {
		cfg.User = "local"
	}
	res := &BootstrapResult{}
	users, err := e.Users(ctx)
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		if u.Name == cfg.User {
			res.User = u
		}
	}
	if res.User.ID == "" {
		hasAccounts, err := e.db.HasTokens(ctx)
		if err != nil {
			return nil, err
		}
		if hasAccounts && cfg.WebhookURL == "" {
			return res, nil // someone else's emulator already: nothing to do
		}
		res.Token, res.User, err = e.CreateToken(ctx, cfg.User, RoleWrite, "bootstrap")
		if err != nil {
			return nil, err
		}
	}
	if cfg.WebhookURL == "" {
		return res, nil
	}
	list, err := e.Webhooks(ctx, res.User.ID)
	if err != nil {
		return nil, err
	}
	var stale []*Webhook // earlier runs' bootstrap webhooks: cfg.Replaces
	for _, w := range list {
		switch {
		case w.URL == cfg.WebhookURL && res.Webhook == nil:
			res.Webhook = w
		case w.URL != "" && cfg.Replaces != nil && cfg.Replaces(w.URL):
			stale = append(stale, w)
		}
	}
	if res.Webhook == nil && len(stale) > 0 {
		w := stale[0]
		stale = stale[1:]
		if res.Webhook, err = e.UpdateWebhook(ctx, res.User.ID, w.ID, WebhookInput{URL: &cfg.WebhookURL, Secret: &cfg.WebhookSecret}); err != nil {
			return nil, err
		}
		res.MovedFrom = w.URL
	}
	// Others left by runs before (an older robothub made one per port) would deliver every event
	// again to the same receiver: they go.
	for _, w := range stale {
		if err := e.DeleteWebhook(ctx, res.User.ID, w.ID); err != nil {
			return nil, err
		}
		res.Removed++
	}
	if res.Webhook != nil {
		return res, nil
	}
	watched := cfg.Watched
	if len(watched) == 0 {
		watched = []hub.WatchedItem{{Type: "user", Name: res.User.Name}}
	}
	in := WebhookInput{URL: &cfg.WebhookURL, Watched: &watched, Secret: &cfg.WebhookSecret}
	if cfg.Domains != nil {
		in.Domains = &cfg.Domains
	}
	res.Webhook, err = e.CreateWebhook(ctx, res.User.ID, in)
	if err != nil {
		return nil, err
	}
	res.CreatedWH = true
	return res, nil
}

// Logger is the hub's logger.
func (e *Emulator) Logger() *slog.Logger { return e.log }

// Now is the hub's clock.
func (e *Emulator) Now() time.Time { return e.now() }

// Notify tells the dispatcher that deliveries were recorded (by EmitChange's transaction).
func (e *Emulator) Notify() { e.wakeDispatcher() }
