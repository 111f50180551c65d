package webhookscmd

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/robothub/robothub/cli/hubconn"
	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/internal/hubemu"
)

// webhookJSON is a webhook in the CLI's JSON output: the hub's record, with "status" spelled out
// and the secret's value left out unless --show-secret is given.
type webhookJSON struct {
	ID        string            `json:"id"`
	URL       string            `json:"url,omitempty"`
	Job       *hub.Job          `json:"job,omitempty"`
	Watched   []hub.WatchedItem `json:"watched"`
	Domains   []string          `json:"domains"`
	Status    string            `json:"status"`
	Disabled  bool              `json:"disabled"`
	SecretSet bool              `json:"secretSet"`
	Secret    string            `json:"secret,omitempty"`
}

func webhookStatus(w hub.Webhook) string {
	if w.Disabled {
		return "disabled"
	}
	return "enabled"
}

func toJSON(w hub.Webhook, showSecret bool) webhookJSON {
	out := webhookJSON{ID: w.ID, URL: w.URL, Job: w.Job, Watched: w.Watched, Domains: w.Domains,
		Status: webhookStatus(w), Disabled: w.Disabled, SecretSet: w.Secret != ""}
	if out.Watched == nil {
		out.Watched = []hub.WatchedItem{}
	}
	if out.Domains == nil {
		out.Domains = []string{}
	}
	if showSecret {
		out.Secret = w.Secret
	}
	return out
}

func watchedList(w hub.Webhook) string {
	parts := make([]string, len(w.Watched))
	for i, it := range w.Watched {
		parts[i] = it.String()
	}
	return strings.Join(parts, ",")
}

// printWebhooks writes a list in the chosen format.
func printWebhooks(out io.Writer, format string, list []hub.Webhook) error {
	recs := make([]webhookJSON, len(list))
	for i, w := range list {
		recs[i] = toJSON(w, false)
	}
	return hubconn.PrintResult(out, format, recs, hubconn.IDsOf(list, func(w hub.Webhook) string { return w.ID }), func() error {
		if len(list) == 0 {
			_, err := fmt.Fprintln(out, "No webhooks. Create one with: robothub webhooks create --url URL --watch TYPE:NAME")
			return err
		}
		tw := hubconn.NewTable(out)
		fmt.Fprintln(tw, "ID\tURL\tSTATUS\tDOMAINS\tWATCHED")
		for _, w := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", w.ID, hubconn.Target(w), webhookStatus(w), strings.Join(w.Domains, ","), watchedList(w))
		}
		return tw.Flush()
	})
}

// printWebhook writes one webhook in the chosen format, after a one-line summary (table only).
func printWebhook(out io.Writer, format, summary string, w *hub.Webhook, showSecret bool) error {
	return hubconn.PrintResult(out, format, toJSON(*w, showSecret), []string{w.ID}, func() error { return webhookTable(out, summary, w, showSecret) })
}

func webhookTable(out io.Writer, summary string, w *hub.Webhook, showSecret bool) error {
	if summary != "" {
		fmt.Fprintln(out, summary)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 1, ' ', 0)
	fmt.Fprintf(tw, "ID:\t%s\n", w.ID)
	if w.Job != nil {
		fmt.Fprintf(tw, "Job:\t%s\n", jobSummary(w.Job))
		names := "(none)"
		if len(w.Job.SecretNames) > 0 {
			names = strings.Join(w.Job.SecretNames, ", ")
		}
		fmt.Fprintf(tw, "Job secrets:\t%s\n", names)
	} else {
		fmt.Fprintf(tw, "URL:\t%s\n", w.URL)
	}
	fmt.Fprintf(tw, "Status:\t%s\n", webhookStatus(*w))
	fmt.Fprintf(tw, "Domains:\t%s\n", strings.Join(w.Domains, ", "))
	fmt.Fprintf(tw, "Watched:\t%s\n", strings.ReplaceAll(watchedList(*w), ",", ", "))
	secret := "(none)"
	if w.Secret != "" {
		secret = "(set; --show-secret shows it)"
		if showSecret {
			secret = w.Secret
		}
	}
	fmt.Fprintf(tw, "Secret:\t%s\n", secret)
	return tw.Flush()
}

func jobSummary(j *hub.Job) string {
	var parts []string
	if j.SourceID != "" {
		parts = append(parts, "source "+j.SourceID)
	}
	if j.DockerImage != "" {
		parts = append(parts, "image "+j.DockerImage)
	}
	if cmd := append(append([]string(nil), j.Command...), j.Arguments...); len(cmd) > 0 {
		parts = append(parts, "runs "+hubconn.ShellQuote(cmd))
	}
	if len(parts) == 0 {
		return "(job)"
	}
	return strings.Join(parts, ", ")
}

// printActivity writes a webhook's deliveries, one row per attempt.
func printActivity(out io.Writer, format string, a *hubemu.Activity) error {
	return hubconn.PrintResult(out, format, a, hubconn.IDsOf(a.Deliveries, func(d hubemu.Delivery) string { return d.ID }), func() error { return activityTable(out, a) })
}

func activityTable(out io.Writer, a *hubemu.Activity) error {
	limit := "no limit"
	if a.TriggerLimit > 0 {
		limit = fmt.Sprintf("limit %d per emitting user", a.TriggerLimit)
	}
	fmt.Fprintf(out, "Webhook %s: %d triggers in the last 24 hours (%s)\n", a.WebhookID, a.Triggers24h, limit)
	if len(a.Deliveries) == 0 {
		_, err := fmt.Fprintln(out, "No deliveries yet.")
		return err
	}
	tw := hubconn.NewTable(out)
	fmt.Fprintln(tw, "DELIVERY\tEVENT\tREPO\tSTATE\tTIME\tSTATUS\tLATENCY\tERROR")
	for _, d := range a.Deliveries {
		event := d.Scope + "/" + d.Action
		state := d.State
		if d.ReplayOf != "" {
			state += " (replay)"
		}
		if len(d.Attempts) == 0 {
			note := d.LastError
			if d.NextAttemptAt != nil {
				note = "next attempt " + d.NextAttemptAt.Local().Format(time.TimeOnly)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t-\t-\t%s\n", d.ID, event, d.Repo, state, d.CreatedAt.Local().Format(time.DateTime), note)
			continue
		}
		for i, at := range d.Attempts {
			id, ev, repo, st := d.ID, event, d.Repo, state
			if i > 0 {
				id, ev, repo, st = "", "", "", ""
			}
			code := "-"
			if at.Status > 0 {
				code = fmt.Sprint(at.Status)
			}
			msg := at.Error
			if at.JobRunID != "" {
				msg = strings.TrimSpace("run " + at.JobRunID + " " + msg)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.1fms\t%s\n", id, ev, repo, st, at.At.Local().Format(time.DateTime), code, at.LatencyMS, msg)
		}
	}
	return tw.Flush()
}
