package hub

import (
	"errors"
	"strings"
	"testing"

	"github.com/robothub/robothub/core/fault"
)

func TestParseWatchedItem(t *testing.T) {
	for _, c := range []struct {
		in   string
		want WatchedItem
		err  string
	}{
		{in: "model:alice/bert", want: WatchedItem{"model", "alice/bert"}},
		{in: "model:bert-base-uncased", want: WatchedItem{"model", "bert-base-uncased"}},
		{in: "org:acme", want: WatchedItem{"org", "acme"}},
		{in: "bucket:alice/logs", want: WatchedItem{"bucket", "alice/logs"}},
		{in: "alice/bert", err: `"alice/bert" is not type:name`},
		{in: "repo:alice/bert", err: `unknown watched type "repo": use one of model, dataset, space, user, org, bucket`},
		{in: "model:", err: "name of the watched model is empty"},
		{in: "user:alice/bert", err: "a user is a single name"},
		{in: "bucket:logs", err: "a bucket is named owner/name"},
		{in: "model:a/b/c", err: "not a repo name"},
	} {
		got, err := ParseWatchedItem(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, fault.ErrInvalid) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %v %v, want %v", c.in, got, err, c.want)
		}
	}
}

func TestNormalizeDomains(t *testing.T) {
	got, err := NormalizeDomains([]string{"discussions", "repo", "discussion"})
	if err != nil || strings.Join(got, ",") != "repo,discussion" {
		t.Fatalf("%v %v", got, err)
	}
	if _, err := NormalizeDomains([]string{"code"}); err == nil || !strings.Contains(err.Error(), `unknown domain "code"`) {
		t.Fatalf("error %v", err)
	}
}

func TestCreateRequestValidate(t *testing.T) {
	w := []WatchedItem{{"user", "alice"}}
	for _, c := range []struct {
		name string
		req  CreateRequest
		err  string
	}{
		{"ok url", CreateRequest{URL: "https://example.com/h", Watched: w}, ""},
		{"ok job", CreateRequest{JobID: "abc123", Watched: w, Secrets: map[string]string{"TOKEN": "x"}}, ""},
		{"neither", CreateRequest{Watched: w}, "give the URL to send payloads to, or the ID of a source job"},
		{"both", CreateRequest{URL: "https://e.com", JobID: "abc", Watched: w}, "not both"},
		{"relative", CreateRequest{URL: "/hook", Watched: w}, "not an absolute http(s) URL"},
		{"no host", CreateRequest{URL: "https://", Watched: w}, "has no host"},
		{"ftp", CreateRequest{URL: "ftp://e.com/x", Watched: w}, "not an absolute http(s) URL"},
		{"no watched", CreateRequest{URL: "https://e.com"}, "watch at least one item"},
		{"bad watched", CreateRequest{URL: "https://e.com", Watched: []WatchedItem{{"team", "x"}}}, "watched[0].type"},
		{"bad domain", CreateRequest{URL: "https://e.com", Watched: w, Domains: []string{"x"}}, `unknown domain "x"`},
		{"secrets on url", CreateRequest{URL: "https://e.com", Watched: w, Secrets: map[string]string{"A": "1"}}, "need a job ID"},
		{"bad secret name", CreateRequest{JobID: "abc", Watched: w, Secrets: map[string]string{"1A": "v"}}, `"1A" is not a valid secret name`},
		{"bad job id", CreateRequest{JobID: "../x", Watched: w}, "not a valid ID"},
		{"non-ascii secret", CreateRequest{URL: "https://e.com", Watched: w, Secret: "é"}, "printable ASCII"},
	} {
		_, err := c.req.Validate()
		if c.err == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		}
	}
	// Secret values never appear in a validation error.
	_, err := CreateRequest{URL: "https://e.com", Watched: w, Secrets: map[string]string{"A": "value-xyz"}}.Validate()
	if err == nil || strings.Contains(err.Error(), "value-xyz") {
		t.Fatalf("error %v", err)
	}
}

func TestUpdateRequestValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		req  UpdateRequest
		err  string
	}{
		{"nothing", UpdateRequest{}, "nothing to update"},
		{"url", UpdateRequest{URL: new("https://e.com")}, ""},
		{"remove secret", UpdateRequest{Secret: new("")}, ""},
		{"url and job", UpdateRequest{URL: new("https://e.com"), JobID: "abc"}, "not both"},
		{"secrets alone", UpdateRequest{Secrets: map[string]string{"A": "1"}}, "together with the job ID"},
		{"job with secrets", UpdateRequest{JobID: "abc", Secrets: map[string]string{"A": "1", "B": ""}}, ""},
		{"empty watched", UpdateRequest{Watched: []WatchedItem{}}, "watch at least one item"},
		{"empty domains", UpdateRequest{Domains: []string{}}, "at least one domain"},
		{"bad url", UpdateRequest{URL: new("example.com")}, "not an absolute http(s) URL"},
	} {
		_, err := c.req.Validate()
		if c.err == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		}
	}
}
