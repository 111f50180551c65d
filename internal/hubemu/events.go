package hubemu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robothub/robothub/core/fault"

	"github.com/robothub/robothub/core/webhook"
)

// EmitInput describes an event on a repo, as a push, a settings change or a discussion would cause
// it on the public hub. Only Repo, Scope and Action are required; the emulator fills in IDs, URLs,
// commit IDs and discussion numbers.
type EmitInput struct {
	Repo          string               `json:"repo"`   // type:owner/name, such as model:alice/bert
	Scope         string               `json:"scope"`  // repo, repo.content, repo.config, discussion, discussion.comment
	Action        string               `json:"action"` // create, update, delete, move
	Private       *bool                `json:"private,omitempty"`
	HeadSha       string               `json:"headSha,omitempty"`     // repo.content: the new head of main
	UpdatedRefs   []webhook.UpdatedRef `json:"updatedRefs,omitempty"` // repo.content: default main moved to HeadSha
	UpdatedConfig json.RawMessage      `json:"updatedConfig,omitempty"`
	Discussion    *DiscussionInput     `json:"discussion,omitempty"`
	Comment       *CommentInput        `json:"comment,omitempty"`
	MovedTo       string               `json:"movedTo,omitempty"` // repo move: the new owner/name

	// fromGit marks an event of a stored space (a push, a creation, a deletion): HeadSha is the
	// real head of main, even when it is empty (no main yet), and is never made up.
	fromGit bool
}

// DiscussionInput describes the discussion of a discussion event. Num 0 means a new discussion on
// create and the latest one otherwise.
type DiscussionInput struct {
	Num           int    `json:"num,omitempty"`
	Title         string `json:"title,omitempty"`
	IsPullRequest bool   `json:"isPullRequest,omitempty"`
	Status        string `json:"status,omitempty"`
}

// CommentInput describes the comment of a discussion.comment event.
type CommentInput struct {
	Content string `json:"content,omitempty"`
	Hidden  bool   `json:"hidden,omitempty"`
}

// EmitResult is an emitted event and the deliveries it caused.
type EmitResult struct {
	EventID    string          `json:"id"`
	Payload    json.RawMessage `json:"payload"` // as delivered, without the webhook field each delivery adds
	Deliveries []DeliveryRef   `json:"deliveries"`
}

// DeliveryRef names one delivery and its first state: pending, or rate_limited when the webhook has
// used its triggers of the last 24 hours.
type DeliveryRef struct {
	ID        string `json:"id"`
	WebhookID string `json:"webhookId"`
	State     string `json:"state"`
}

var repoTypes = map[string]struct{ web, api string }{
	"model":   {"", "models"},
	"dataset": {"datasets/", "datasets"},
	"space":   {"spaces/", "spaces"},
	"bucket":  {"buckets/", "buckets"},
}

// validActions lists the actions of each documented scope. A narrower scope the hub may add later
// (repo.config.dois) accepts any of create, update, delete, move.
var validActions = map[string][]string{
	webhook.ScopeRepo:              {"create", "update", "delete", "move"},
	webhook.ScopeRepoContent:       {"update"},
	webhook.ScopeRepoConfig:        {"update"},
	webhook.ScopeDiscussion:        {"create", "update", "delete"},
	webhook.ScopeDiscussionComment: {"create", "update"},
}

// domainOf returns the webhook domain an event scope belongs to.
func domainOf(scope string) string {
	if scope == "repo" || strings.HasPrefix(scope, "repo.") {
		return "repo"
	}
	return "discussion"
}

func (in *EmitInput) validate() (repoType, repoName, owner string, err error) {
	repoType, repoName, ok := strings.Cut(in.Repo, ":")
	if _, known := repoTypes[repoType]; !ok || !known {
		return "", "", "", errorf(fault.Invalid, "repo: %q is not type:owner/name with a type of model, dataset, space or bucket", in.Repo)
	}
	owner, name, ok := strings.Cut(repoName, "/")
	if !ok || owner == "" || name == "" || strings.ContainsAny(name, "/ \t?#") {
		return "", "", "", errorf(fault.Invalid, "repo: %q is not owner/name", repoName)
	}
	actions, known := validActions[in.Scope]
	if !known {
		if !strings.HasPrefix(in.Scope, "repo.") && !strings.HasPrefix(in.Scope, "discussion.") {
			return "", "", "", errorf(fault.Invalid, "scope: %q is not one of repo, repo.content, repo.config, discussion, discussion.comment (or narrower)", in.Scope)
		}
		actions = validActions[webhook.ScopeRepo]
	}
	found := false
	for _, a := range actions {
		found = found || a == in.Action
	}
	if !found {
		return "", "", "", errorf(fault.Invalid, "action: %q is not an action of scope %s (use %s)", in.Action, in.Scope, strings.Join(actions, ", "))
	}
	if in.Scope == webhook.ScopeRepo && in.Action == "move" {
		o, n, ok := strings.Cut(in.MovedTo, "/")
		if !ok || o == "" || n == "" || strings.Contains(n, "/") {
			return "", "", "", errorf(fault.Invalid, "movedTo: a move needs the new owner/name, not %q", in.MovedTo)
		}
	}
	if len(in.UpdatedConfig) > 0 && in.UpdatedConfig[0] != '{' {
		return "", "", "", errorf(fault.Invalid, "updatedConfig: must be an object")
	}
	return repoType, repoName, owner, nil
}

// storedPayload is a payload without its webhook field: the outer, nil field hides the embedded one.
type storedPayload struct {
	*webhook.Payload
	Webhook *webhook.Ref `json:"webhook,omitempty"`
}

// Emit records an event caused by the principal and queues a delivery for every enabled webhook
// that watches the repo or its owner within the event's domain. Deliveries over a webhook's trigger
// limit are recorded as rate_limited and not sent.
func (e *Emulator) Emit(ctx context.Context, by Principal, in EmitInput) (*EmitResult, error) {
	if _, _, _, err := in.validate(); err != nil {
		return nil, err
	}
	var res *EmitResult
	err := e.db.Update(ctx, func(tx Tx) error {
		var err error
		res, err = e.emitTx(ctx, tx, by, in)
		return err
	})
	if err != nil {
		return nil, err
	}
	e.wakeDispatcher()
	return res, nil
}

// EmitChange emits the event of a change to a stored space (a creation, a deletion, a push) inside
// the transaction that stores the change. Its HeadSha is the real head of main, even when empty.
// The caller calls Notify once the transaction is committed.
func (e *Emulator) EmitChange(ctx context.Context, tx Tx, by Principal, in EmitInput) (*EmitResult, error) {
	in.fromGit = true
	return e.emitTx(ctx, tx, by, in)
}

// emitTx is Emit inside the caller's transaction, so that a change and its event are stored
// together. The caller wakes the dispatcher after the commit.
func (e *Emulator) emitTx(ctx context.Context, tx Tx, by Principal, in EmitInput) (*EmitResult, error) {
	repoType, repoName, ownerName, err := in.validate()
	if err != nil {
		return nil, err
	}
	res := &EmitResult{Deliveries: []DeliveryRef{}}
	err = func() error {
		now := e.now()
		if !in.fromGit {
			if err := checkEmitAllowed(ctx, tx, by, repoType, repoName, ownerName, in); err != nil {
				return err
			}
		}
		owner, _, err := ensureUser(ctx, tx, ownerName, "user", now)
		if err != nil {
			return err
		}
		repo, err := EnsureRepo(ctx, tx, repoType, repoName, owner.ID, now)
		if err != nil {
			return err
		}
		if !in.fromGit && repoType == "space" {
			if err := checkEmitOnStoredSpace(ctx, tx, repo.ID, repoName, in); err != nil {
				return err
			}
		}
		if in.Private != nil {
			repo.Private = *in.Private
		}
		p, err := e.buildPayload(ctx, tx, by, repo, in, now)
		if err != nil {
			return err
		}
		if p.MovedTo != nil {
			repo.Name, repo.OwnerID = p.MovedTo.Name, p.MovedTo.Owner.ID
		}
		if err := tx.UpdateRepo(ctx, repo); err != nil {
			if p.MovedTo != nil && errors.Is(err, ErrExists) {
				return errorf(fault.Refused, "movedTo: %s:%s already exists", repoType, p.MovedTo.Name)
			}
			return err
		}
		// Stored without its webhook field: each delivery adds its own (withWebhookRef).
		raw, err := json.Marshal(storedPayload{Payload: p})
		if err != nil {
			return err
		}
		res.EventID, res.Payload = NewID(now), raw
		if err := tx.InsertEvent(ctx, Event{ID: res.EventID, RepoID: repo.ID, EmitterID: by.User.ID, Scope: in.Scope, Action: in.Action, Payload: raw, CreatedAt: now}); err != nil {
			return err
		}
		targets, err := tx.MatchingWebhooks(ctx, repo, ownerName, domainOf(in.Scope))
		if err != nil {
			return err
		}
		for _, id := range targets {
			ref, err := e.queueDelivery(ctx, tx, id, res.EventID, "", by.User)
			if err != nil {
				return err
			}
			res.Deliveries = append(res.Deliveries, ref)
		}
		return nil
	}()
	if err != nil {
		return nil, err
	}
	return res, nil
}

// checkEmitAllowed keeps one user from acting for another through emitted events (issue 11).
//   - Events are emitted only on the caller's own repos (owner/... is the caller's name), and a
//     move only into the caller's own namespace (the emulator has no organizations to share).
//   - The exception is what the public hub lets anyone do: open a discussion, or comment, on a
//     public repo that exists. The event's author is then the caller, never the owner.
//   - A repo's visibility changes only through a repo.config update (by its owner): private on
//     any other event is refused, so that no event flips a repo's visibility on the side.
func checkEmitAllowed(ctx context.Context, tx Tx, by Principal, repoType, repoName, ownerName string, in EmitInput) error {
	if in.Private != nil && in.Scope != webhook.ScopeRepoConfig {
		return errorf(fault.Invalid, "private: a repo's visibility changes only with a repo.config update event (--scope repo.config), not with %s %s", in.Scope, in.Action)
	}
	if ownerName == by.User.Name {
		if in.Scope == webhook.ScopeRepo && in.Action == "move" {
			if newOwner, _, _ := strings.Cut(in.MovedTo, "/"); newOwner != by.User.Name {
				return errorf(fault.Forbidden, "movedTo: %s is not in your namespace (%s/...): you may move your repos only among your own", in.MovedTo, by.User.Name)
			}
		}
		return nil
	}
	denied := errorf(fault.Forbidden, "repo: %s:%s belongs to %s: you (%s) may emit events only on your own repos", repoType, repoName, ownerName, by.User.Name)
	publicAct := (in.Scope == webhook.ScopeDiscussion || in.Scope == webhook.ScopeDiscussionComment) && in.Action == "create"
	if !publicAct {
		return denied
	}
	repo, err := tx.RepoByName(ctx, repoType, repoName)
	if errors.Is(err, ErrNotFound) || (err == nil && repo.Private) {
		return denied // a private repo is not shown to others: the same answer as a missing one
	}
	return err
}

// checkEmitOnStoredSpace refuses the made-up events that would contradict a space's git data: a
// push (its head is the real one) and a move (its repository would stay where it is).
func checkEmitOnStoredSpace(ctx context.Context, tx Tx, repoID, name string, in EmitInput) error {
	if in.Scope != webhook.ScopeRepoContent && !(in.Scope == webhook.ScopeRepo && in.Action == "move") {
		return nil
	}
	_, isSpace, err := tx.SpaceTags(ctx, repoID)
	if err != nil || !isSpace {
		return err
	}
	if in.Scope == webhook.ScopeRepoContent {
		return errorf(fault.Refused, "repo: space:%s is a git repository on this hub: push to it to emit repo.content events", name)
	}
	return errorf(fault.Refused, "repo: space:%s is a git repository on this hub and cannot be moved", name)
}

// EnsureRepo returns the repo of type typ and name, making it (owned by ownerID) if there is none.
func EnsureRepo(ctx context.Context, tx Tx, typ, name, ownerID string, now time.Time) (*Repo, error) {
	r, err := tx.RepoByName(ctx, typ, name)
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	r = &Repo{ID: NewID(now), Type: typ, Name: name, OwnerID: ownerID, CreatedAt: now}
	return r, tx.InsertRepo(ctx, r)
}

func (e *Emulator) buildPayload(ctx context.Context, tx Tx, by Principal, repo *Repo, in EmitInput, now time.Time) (*webhook.Payload, error) {
	kind := repoTypes[repo.Type]
	base := e.publicURL
	web := base + "/" + kind.web + repo.Name
	api := base + "/api/" + kind.api + "/" + repo.Name
	p := &webhook.Payload{
		Event: webhook.Event{Action: in.Action, Scope: in.Scope},
		Repo: webhook.Repo{Type: repo.Type, Name: repo.Name, ID: repo.ID, Private: repo.Private,
			URL: webhook.URL{Web: web, API: api}, Owner: webhook.Ref{ID: repo.OwnerID}},
	}
	if repo.Type == "space" {
		p.Repo.Subdomain = Subdomain(repo.Name)
		tags, _, err := tx.SpaceTags(ctx, repo.ID)
		if err != nil {
			return nil, err
		}
		p.Repo.Tags = tags
	}
	switch domainOf(in.Scope) {
	case "repo":
		if in.Scope == webhook.ScopeRepoContent || (in.Scope == webhook.ScopeRepo && in.Action == "create" && repo.HeadSha == "") {
			old := repo.HeadSha
			repo.HeadSha = in.HeadSha
			if repo.HeadSha == "" && !in.fromGit {
				repo.HeadSha = newSha()
			}
			if in.Scope == webhook.ScopeRepoContent {
				p.UpdatedRefs = in.UpdatedRefs
				if len(p.UpdatedRefs) == 0 {
					newSha := repo.HeadSha
					ref := webhook.UpdatedRef{Ref: "refs/heads/main", NewSha: &newSha}
					if old != "" {
						ref.OldSha = &old
					}
					p.UpdatedRefs = []webhook.UpdatedRef{ref}
				}
			}
		}
		p.Repo.HeadSha = repo.HeadSha
		if in.Scope == webhook.ScopeRepoConfig || strings.HasPrefix(in.Scope, webhook.ScopeRepoConfig+".") {
			p.UpdatedConfig = in.UpdatedConfig
			if len(p.UpdatedConfig) == 0 {
				p.UpdatedConfig = json.RawMessage("{}")
				if in.Private != nil {
					p.UpdatedConfig, _ = json.Marshal(map[string]bool{"private": *in.Private})
				}
			}
		}
		if in.Scope == webhook.ScopeRepo && in.Action == "move" {
			newOwner, _, _ := strings.Cut(in.MovedTo, "/")
			u, _, err := ensureUser(ctx, tx, newOwner, "user", now)
			if err != nil {
				return nil, err
			}
			p.MovedTo = &webhook.MovedTo{Name: in.MovedTo, Owner: webhook.Ref{ID: u.ID}}
		}
	case "discussion":
		var err error
		if p.Discussion, p.Comment, err = e.discussionEvent(ctx, tx, by, repo, in, web, api, now); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Subdomain is the host name label of a space owner/name, as the public hub makes it.
func Subdomain(name string) string {
	return strings.ToLower(strings.NewReplacer("/", "-", ".", "-", "_", "-").Replace(name))
}

func discussionID(repoID string, num int) string {
	s := fmt.Sprintf("%s%06x", repoID[:18], num)
	return s[:24]
}

// RepoNotFound is the public hub's answer for a repo that does not exist or that the caller may
// not see: 401 to an anonymous caller (who may have forgotten the token), 404 to a signed-in one.
func RepoNotFound(anonymous bool, name string) error {
	if anonymous {
		return &fault.Error{Kind: fault.Unauthenticated, Code: "RepoNotFound",
			Msg: "Repository not found: space " + name + " does not exist, or it is private and the request has no token"}
	}
	return &fault.Error{Kind: fault.NotFound, Code: "RepoNotFound", Msg: "Repository not found: space " + name}
}
