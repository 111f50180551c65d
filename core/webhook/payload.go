package webhook

import (
	"encoding/json"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Payload is one delivery of the hub's webhook payload, version 3.
//
// Every field the hub documents is modelled, including repo.headSha and updatedConfig. Fields the
// hub adds later are not lost: Raw holds the exact bytes that were delivered.
type Payload struct {
	Event         Event           `json:"event"`
	Repo          Repo            `json:"repo"`
	Discussion    *Discussion     `json:"discussion,omitempty"`
	Comment       *Comment        `json:"comment,omitempty"`
	Webhook       Ref             `json:"webhook"`
	MovedTo       *MovedTo        `json:"movedTo,omitempty"`
	UpdatedRefs   []UpdatedRef    `json:"updatedRefs,omitempty"`
	UpdatedConfig json.RawMessage `json:"updatedConfig,omitempty"`

	// Raw is the body exactly as delivered. It is shared, not copied: do not modify it.
	Raw json.RawMessage `json:"-"`

	// canonical says Raw is already as json/v2 writes it: no whitespace between tokens, no escape
	// in a string (the payloads hubs send). Parse's decoder knows it (decode.go).
	canonical bool
}

// AppendCompactRaw appends Raw as json/v2 writes a JSON value: without whitespace between tokens,
// the escapes in strings written its way ("\u00e9" as "é"). A log line can hold it. For the compact
// payloads hubs send it is a copy; others go through json/v2's encoder. The error is json/v2's, for
// a Raw that Parse did not check.
func (p *Payload) AppendCompactRaw(dst []byte) ([]byte, error) {
	if p.canonical {
		return append(dst, p.Raw...), nil
	}
	out, err := jsonv2.Marshal(jsontext.Value(p.Raw))
	if err != nil {
		return dst, err
	}
	return append(dst, out...), nil
}

// Event says what happened: an action within a scope, such as "update" in "repo.content".
type Event struct {
	Action string `json:"action"`
	Scope  string `json:"scope"`
}

// Known event scopes of payload version 3, whose actions are create, update, delete and move.
const (
	ScopeRepo              = "repo"
	ScopeRepoContent       = "repo.content"
	ScopeRepoConfig        = "repo.config"
	ScopeDiscussion        = "discussion"
	ScopeDiscussionComment = "discussion.comment"

	ActionUpdate = "update"
)

var knownScopes = []string{ScopeDiscussionComment, ScopeDiscussion, ScopeRepoContent, ScopeRepoConfig, ScopeRepo}

// Known reports whether the event's scope is one that payload version 3 documents.
func (e Event) Known() bool { return slices.Contains(knownScopes, e.Scope) }

// Normalized maps an event in a scope the hub added after version 3 onto the scopes this package
// knows, as the hub recommends: any action on a narrower unknown scope ("repo.config.dois") is an
// update of its closest known broader scope ("repo.config"). Known events and events whose scope has
// no known ancestor are returned unchanged.
func (e Event) Normalized() Event {
	if e.Known() {
		return e
	}
	for _, s := range knownScopes { // narrowest first
		if strings.HasPrefix(e.Scope, s+".") {
			return Event{Action: ActionUpdate, Scope: s}
		}
	}
	return e
}

// Is reports whether the event, normalized, is action in scope.
func (e Event) Is(scope, action string) bool {
	n := e.Normalized()
	return n.Scope == scope && n.Action == action
}

// Repo is the repository the event belongs to. Every event has one.
type Repo struct {
	Type      string   `json:"type"` // "model", "dataset" or "space"
	Name      string   `json:"name"` // "owner/name"
	ID        string   `json:"id"`
	Private   bool     `json:"private"`
	URL       URL      `json:"url"`
	Owner     Ref      `json:"owner"`
	HeadSha   string   `json:"headSha,omitempty"` // latest commit on main; sent on repo scopes only
	Subdomain string   `json:"subdomain,omitempty"`
	Tags      []string `json:"tags,omitempty"`
}

// URL holds the web and API addresses of a hub object.
type URL struct {
	Web string `json:"web"`
	API string `json:"api,omitempty"`
}

// Ref identifies a hub object by ID. The webhook reference also carries the payload version.
type Ref struct {
	ID      string `json:"id"`
	Version int    `json:"version,omitempty"`
}

// Discussion is a discussion or pull request (a pull request is a discussion with IsPullRequest).
type Discussion struct {
	ID            string             `json:"id"`
	Num           int                `json:"num"`
	Title         string             `json:"title"`
	URL           URL                `json:"url"`
	Status        string             `json:"status"` // "open", "closed", "merged" or "draft"
	Author        Ref                `json:"author"`
	IsPullRequest bool               `json:"isPullRequest"`
	Changes       *DiscussionChanges `json:"changes,omitempty"`
}

// DiscussionChanges describes a pull request's target and, once merged, its merge commit.
type DiscussionChanges struct {
	Base          string `json:"base"`
	MergeCommitID string `json:"mergeCommitId,omitempty"`
}

// Comment is a comment on a discussion, including the opening comment of a new discussion.
type Comment struct {
	ID      string `json:"id"`
	Author  Ref    `json:"author"`
	Content string `json:"content,omitempty"`
	Hidden  bool   `json:"hidden"`
	URL     URL    `json:"url"`
}

// MovedTo is where a repository went on a "move" event.
type MovedTo struct {
	Name  string `json:"name"`
	Owner Ref    `json:"owner"`
}

// UpdatedRef is one git reference changed by a push. OldSha is nil for a new reference and NewSha
// is nil for a deleted one.
type UpdatedRef struct {
	Ref    string  `json:"ref"`
	OldSha *string `json:"oldSha"`
	NewSha *string `json:"newSha"`
}
