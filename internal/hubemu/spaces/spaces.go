package spaces

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/internal/hubemu"

	"github.com/robothub/robothub/core/webhook"
)

// SpaceSDKs are the sdk values a space may have, as on the public hub.
var SpaceSDKs = []string{"gradio", "streamlit", "docker", "static"}

// DefaultSpaceSDK is the sdk of a space created without one: an app package's landing page is static.
const DefaultSpaceSDK = "static"

// maxRepoNameLen is the longest repo name the hub accepts.
const maxRepoNameLen = 96

// hasTags reports whether the space carries every one of tags.
func hasTags(sp *hubemu.Space, tags []string) bool {
	for _, t := range tags {
		if !slices.Contains(sp.Tags, t) {
			return false
		}
	}
	return true
}

// CreateRepoInput is the body of POST /api/repos/create, in the public hub's shape.
type CreateRepoInput struct {
	Name         string  `json:"name"`
	Organization *string `json:"organization"`
	Type         string  `json:"type"` // model (the default), dataset or space: only space is stored here
	Private      *bool   `json:"private"`
	Visibility   *string `json:"visibility"` // the 1.x client's form of private: "public" or "private"
	SDK          string  `json:"sdk"`
}

// RepoRefInput names a repo, as the body of DELETE /api/repos/delete does.
type RepoRefInput struct {
	Name         string  `json:"name"`
	Organization *string `json:"organization"`
	Type         string  `json:"type"`
}

// fullName checks the repo's type and name for the caller and returns owner/name.
func repoFullName(by hubemu.Principal, name string, organization *string, typ string) (string, error) {
	if typ == "" {
		typ = "model"
	}
	switch typ {
	case "space":
	case "model", "dataset":
		return "", errorf(fault.Invalid, "type: %q: only spaces are stored by this emulator (use \"type\": \"space\")", typ)
	default:
		return "", errorf(fault.Invalid, "type: %q is not one of model, dataset, space", typ)
	}
	org := ""
	if organization != nil {
		org = *organization
	}
	// Older clients send "owner/name" as the name.
	if owner, rest, ok := strings.Cut(name, "/"); ok {
		if org != "" && org != owner {
			return "", errorf(fault.Invalid, "name: %q names the owner %s, but organization is %s", name, owner, org)
		}
		org, name = owner, rest
	}
	if err := CheckRepoName(name); err != nil {
		return "", err
	}
	if org != "" && org != by.User.Name {
		return "", errorf(fault.Forbidden, "organization: %q: this emulator has no organizations; you (%s) can make repos under your own name only", org, by.User.Name)
	}
	return by.User.Name + "/" + name, nil
}

// CheckRepoName applies the public hub's rules to the name part of a repo ID.
func CheckRepoName(name string) error {
	switch {
	case name == "":
		return errorf(fault.Invalid, "name: the repo name is empty")
	case len(name) > maxRepoNameLen:
		return errorf(fault.Invalid, "name: %q is longer than %d characters", name, maxRepoNameLen)
	case strings.Contains(name, "..") || strings.Contains(name, "--"):
		return errorf(fault.Invalid, "name: %q: '--' and '..' are not allowed", name)
	case strings.HasPrefix(name, "-") || strings.HasPrefix(name, ".") || strings.HasSuffix(name, "-") || strings.HasSuffix(name, "."):
		return errorf(fault.Invalid, "name: %q: '-' and '.' cannot start or end a repo name", name)
	case strings.HasSuffix(strings.ToLower(name), ".git"):
		return errorf(fault.Invalid, "name: %q: a repo name cannot end with .git", name)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return errorf(fault.Invalid, "name: %q: use letters, digits, '-', '_' and '.' only", name)
		}
	}
	return nil
}

func checkSDK(sdk string) (string, error) {
	if sdk == "" {
		return DefaultSpaceSDK, nil
	}
	if !slices.Contains(SpaceSDKs, sdk) {
		return "", errorf(fault.Invalid, "sdk: %q is not one of %s", sdk, strings.Join(SpaceSDKs, ", "))
	}
	return sdk, nil
}

// spaceTags is a space's tags: the card's, then the sdk.
func spaceTags(card cardData, sdk string) []string {
	tags := card.tags()
	if !slices.Contains(tags, sdk) {
		tags = append(tags, sdk)
	}
	return tags
}

// CreateSpace makes an empty space owned by the caller: a git repository with no commits whose
// branch will be main. It emits a repo create event.
func (s *Service) CreateSpace(ctx context.Context, by hubemu.Principal, in CreateRepoInput) (*hubemu.Space, error) {
	name, err := repoFullName(by, in.Name, in.Organization, in.Type)
	if err != nil {
		return nil, err
	}
	sdk, err := checkSDK(in.SDK)
	if err != nil {
		return nil, err
	}
	private, err := in.private()
	if err != nil {
		return nil, err
	}
	unlock, err := s.locks.lock(ctx, name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, err := s.spaceByName(ctx, name); err == nil {
		return nil, &RepoExistsError{&fault.Error{Kind: fault.Refused, Msg: "You already created this space repo: " + name}, name}
	} else if !errors.Is(err, fault.ErrNotFound) {
		return nil, err
	}
	if err := s.git.Available(); err != nil {
		return nil, err
	}
	if err := s.git.Create(ctx, name); err != nil {
		return nil, fmt.Errorf("creating the git repository of %s: %w", name, err)
	}
	err = s.db.Update(ctx, func(tx hubemu.Tx) error {
		now := s.hub.Now()
		// A repo that emitted events named before (it has a repos row, no git data) becomes this space.
		repo, err := hubemu.EnsureRepo(ctx, tx, "space", name, by.User.ID, now)
		if err != nil {
			return err
		}
		repo.Private, repo.HeadSha, repo.OwnerID = private, "", by.User.ID
		if err := tx.UpdateRepo(ctx, repo); err != nil {
			return err
		}
		if err := tx.InsertSpace(ctx, repo.ID, hubemu.SpaceState{SDK: sdk, Tags: spaceTags(cardData{}, sdk), Modified: now}); err != nil {
			return err
		}
		_, err = s.hub.EmitChange(ctx, tx, by, hubemu.EmitInput{Repo: "space:" + name, Scope: webhook.ScopeRepo, Action: "create"})
		return err
	})
	if err != nil {
		_ = s.git.Remove(name)
		return nil, err
	}
	s.hub.Notify()
	s.log.Info("space created", "space", name, "private", private, "sdk", sdk)
	return s.spaceByName(ctx, name)
}

// private reads the visibility of a new space from either form the public clients send.
func (in *CreateRepoInput) private() (bool, error) {
	private := in.Private != nil && *in.Private
	if in.Visibility == nil {
		return private, nil
	}
	switch v := *in.Visibility; v {
	case "public", "private":
		if in.Private != nil && private != (v == "private") {
			return false, errorf(fault.Invalid, "private and visibility disagree: give one of them")
		}
		return v == "private", nil
	case "protected":
		return false, errorf(fault.Invalid, "visibility: protected spaces (a public app with private files) are not emulated: use public or private")
	default:
		return false, errorf(fault.Invalid, "visibility: %q is not one of public, private", v)
	}
}

// RepoExistsError is the 409 of a create whose repo exists; the answer carries the repo's URL, as
// the public hub's does (the Python client's create_repo(exist_ok=True) reads it).
type RepoExistsError struct {
	err  *fault.Error
	Name string // owner/name
}

func (e *RepoExistsError) Error() string { return e.err.Msg }
func (e *RepoExistsError) Unwrap() error { return e.err }

// DeleteSpace deletes one of the caller's spaces with its git data. It emits a repo delete event.
func (s *Service) DeleteSpace(ctx context.Context, by hubemu.Principal, in RepoRefInput) error {
	name, err := repoFullName(by, in.Name, in.Organization, in.Type)
	if err != nil {
		return err
	}
	unlock, err := s.locks.lock(ctx, name)
	if err != nil {
		return err
	}
	defer unlock()
	sp, err := s.spaceByName(ctx, name)
	if err != nil {
		return err
	}
	err = s.db.Update(ctx, func(tx hubemu.Tx) error {
		if _, err := s.hub.EmitChange(ctx, tx, by, hubemu.EmitInput{Repo: "space:" + name, Scope: webhook.ScopeRepo, Action: "delete"}); err != nil {
			return err
		}
		return tx.DeleteRepo(ctx, sp.RepoID)
	})
	if err != nil {
		return err
	}
	s.hub.Notify()
	if err := s.git.Remove(name); err != nil {
		s.log.Error("removing the git repository of a deleted space", "space", name, "err", err)
	}
	s.log.Info("space deleted", "space", name)
	return nil
}

// SpaceFor returns the space owner/name if the viewer may see it (nil: an anonymous viewer).
func (s *Service) SpaceFor(ctx context.Context, viewer *hubemu.Principal, name string) (*hubemu.Space, error) {
	sp, err := s.spaceByName(ctx, name)
	if err != nil && !errors.Is(err, fault.ErrNotFound) {
		return nil, err
	}
	if err != nil || (sp.Private && (viewer == nil || viewer.User.ID != sp.OwnerID)) {
		return nil, hubemu.RepoNotFound(viewer == nil, name)
	}
	return sp, nil
}

// SpaceQuery filters a listing of spaces.
type SpaceQuery struct {
	Tags   []string // every one of them (the filter parameter)
	Author string   // the owner's name
	Search string   // a part of the ID, any case
	Limit  int      // 0: no limit
}

// Spaces lists the spaces the viewer may see (the public ones, and the viewer's own private ones)
// that match q, most recently changed first.
func (s *Service) Spaces(ctx context.Context, viewer *hubemu.Principal, q SpaceQuery) ([]*hubemu.Space, error) {
	viewerID := ""
	if viewer != nil {
		viewerID = viewer.User.ID
	}
	all, err := s.db.Spaces(ctx, viewerID, q.Author)
	if err != nil {
		return nil, err
	}
	out := []*hubemu.Space{}
	search := strings.ToLower(q.Search)
	for _, sp := range all {
		if !hasTags(sp, q.Tags) || (search != "" && !strings.Contains(strings.ToLower(sp.Name), search)) {
			continue
		}
		out = append(out, sp)
		if q.Limit > 0 && len(out) >= q.Limit {
			break
		}
	}
	return out, nil
}

// spaceByName returns the stored space owner/name, whoever may see it, or an fault.ErrNotFound error.
func (s *Service) spaceByName(ctx context.Context, name string) (*hubemu.Space, error) {
	sp, err := s.db.SpaceByName(ctx, name)
	if errors.Is(err, hubemu.ErrNotFound) {
		return nil, notFound("space", name)
	}
	return sp, err
}

// recordPush stores what a push changed and emits its repo.content update, in one transaction.
// changes are the refs the push moved (at least one); head is what main now holds.
func (s *Service) recordPush(ctx context.Context, by hubemu.Principal, sp *hubemu.Space, changes []refChange, mainSha string, snap Snapshot) (*hubemu.EmitResult, error) {
	refs := make([]webhook.UpdatedRef, len(changes))
	for i, c := range changes {
		refs[i] = webhook.UpdatedRef{Ref: c.Ref}
		if c.Old != "" {
			refs[i].OldSha = &c.Old
		}
		if c.New != "" {
			refs[i].NewSha = &c.New
		}
	}
	card := parseFrontMatter(snap.Readme)
	sdk := sp.SDK
	if s, ok := card["sdk"].(string); ok && slices.Contains(SpaceSDKs, s) {
		sdk = s // the README's sdk is the space's, as on the public hub
	}
	if _, err := json.Marshal(card); err != nil {
		return nil, fmt.Errorf("the README front matter of %s: %w", sp.Name, err)
	}
	modified := snap.Modified
	if modified.IsZero() {
		modified = s.hub.Now()
	}
	var res *hubemu.EmitResult
	err := s.db.Update(ctx, func(tx hubemu.Tx) error {
		st := hubemu.SpaceState{SDK: sdk, Tags: spaceTags(card, sdk), CardData: card, Files: snap.Files, Modified: modified}
		if err := tx.UpdateSpace(ctx, sp.RepoID, st); err != nil {
			return err
		}
		var err error
		res, err = s.hub.EmitChange(ctx, tx, by, hubemu.EmitInput{Repo: "space:" + sp.Name, Scope: webhook.ScopeRepoContent, Action: "update",
			HeadSha: mainSha, UpdatedRefs: refs})
		return err
	})
	if err != nil {
		return nil, err
	}
	s.hub.Notify()
	return res, nil
}
