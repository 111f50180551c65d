package hub

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
)

// WatchTypes are the types a watched item may have, in the order help texts list them.
var WatchTypes = []string{"model", "dataset", "space", "user", "org", "bucket"}

// Domains are the kinds of activity a webhook can follow.
var Domains = []string{"repo", "discussion"}

// WatchedItem is one thing a webhook follows: a repo (model, dataset, space, bucket) by its full
// name, or every repo of a user or an organization.
type WatchedItem struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// String returns the item in the CLI's type:name form.
func (w WatchedItem) String() string { return w.Type + ":" + w.Name }

// Webhook is a webhook record as the hub returns it. Exactly one of URL and Job is set.
type Webhook struct {
	ID       string        `json:"id"`
	URL      string        `json:"url,omitempty"`
	Job      *Job          `json:"job,omitempty"`
	Watched  []WatchedItem `json:"watched"`
	Domains  []string      `json:"domains"`
	Secret   string        `json:"secret,omitempty"` // the webhook's secret, sent to the receiver
	Disabled bool          `json:"disabled"`
}

// String describes the webhook without its secret, so a Webhook is safe to print in a log.
func (w Webhook) String() string {
	target := w.URL
	if w.Job != nil {
		target = "(job)"
	}
	status := "enabled"
	if w.Disabled {
		status = "disabled"
	}
	return fmt.Sprintf("webhook %s %s %s", w.ID, target, status)
}

// LogValue keeps the secret out of structured logs.
func (w Webhook) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", w.ID), slog.String("url", w.URL),
		slog.Bool("job", w.Job != nil), slog.Bool("disabled", w.Disabled), slog.Bool("secret_set", w.Secret != ""))
}

// Job is what a job webhook runs: the specification copied from its source job, with the names
// (never the values) of the secrets the webhook hands to each run.
type Job struct {
	SourceID    string            `json:"id,omitempty"` // the source job (emulator; the public hub may omit it)
	DockerImage string            `json:"dockerImage,omitempty"`
	SpaceID     string            `json:"spaceId,omitempty"`
	Command     []string          `json:"command,omitempty"`
	Arguments   []string          `json:"arguments,omitempty"`
	Environment map[string]string `json:"environment,omitempty"`
	SecretNames []string          `json:"secrets,omitempty"`
	Flavor      string            `json:"flavor,omitempty"`
}

// UnmarshalJSON accepts the secrets of a job either as a list of names or as an object whose keys
// are the names (values, if any, are dropped), and environment values of any JSON type.
func (j *Job) UnmarshalJSON(b []byte) error {
	type plain Job // without this method
	var raw struct {
		plain
		Environment map[string]any  `json:"environment"` // these two hide plain's
		Secrets     json.RawMessage `json:"secrets"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*j = Job(raw.plain)
	if len(raw.Environment) > 0 {
		j.Environment = make(map[string]string, len(raw.Environment))
		for k, v := range raw.Environment {
			j.Environment[k] = fmt.Sprint(v)
		}
	}
	s := strings.TrimSpace(string(raw.Secrets))
	switch {
	case s == "" || s == "null":
	case s[0] == '[':
		if err := json.Unmarshal(raw.Secrets, &j.SecretNames); err != nil {
			return fmt.Errorf("job.secrets: %w", err)
		}
	case s[0] == '{':
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw.Secrets, &m); err != nil {
			return fmt.Errorf("job.secrets: %w", err)
		}
		j.SecretNames = slices.Sorted(maps.Keys(m))
	default:
		return fmt.Errorf("job.secrets must be a list of names or an object, not %.20s", s)
	}
	return nil
}

// CreateRequest describes a new webhook. Give exactly one of URL and JobID.
type CreateRequest struct {
	URL     string        // where payloads are POSTed
	JobID   string        // or: the source job to run on each event
	Watched []WatchedItem // at least one
	Domains []string      // "repo", "discussion"; none means both
	Secret  string        // sent to the receiver in X-Webhook-Secret; empty for none
	Secrets map[string]string
	// Secrets are handed to each job run as environment variables (job webhooks only). The source
	// job's own secrets are never copied.
}

// UpdateRequest changes an existing webhook. Only the fields that are set are sent; everything else
// keeps its stored value.
type UpdateRequest struct {
	URL     *string       // a new URL
	Watched []WatchedItem // nil keeps the list; non-nil replaces it and must not be empty
	Domains []string      // nil keeps them; non-nil replaces them and must not be empty
	Secret  *string       // a new webhook secret; a pointer to "" removes it
	// JobID must be given together with Secrets (and only then are secrets sent). A listed secret
	// replaces the stored value, an empty value removes that secret, and unlisted secrets are kept.
	JobID   string
	Secrets map[string]string
}
