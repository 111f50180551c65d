package spaces

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/hub/card"
	"github.com/robothub/robothub/internal/hubemu"
)

// This file is what the hub serves of a space's files: the space at a revision, a folder's entries,
// one file, what a commit must send (preupload), and the bookkeeping of a git push. Reads follow
// the visibility of the space: anyone for a public one, its owner for a private one.

// SpaceRecord is a space in the public hub's JSON shape (GET /api/spaces, GET /api/spaces/{id}).
type SpaceRecord struct {
	MongoID      string         `json:"_id"`
	ID           string         `json:"id"` // owner/name
	Author       string         `json:"author"`
	SHA          string         `json:"sha,omitempty"` // the head of main; absent before the first push
	LastModified time.Time      `json:"lastModified"`
	CreatedAt    time.Time      `json:"createdAt"`
	Private      bool           `json:"private"`
	SDK          string         `json:"sdk"`
	Tags         []string       `json:"tags"`
	Likes        int            `json:"likes"`
	Subdomain    string         `json:"subdomain"`
	CardData     map[string]any `json:"cardData"`
	Siblings     []Sibling      `json:"siblings"`
}

// Sibling is one file of a space.
type Sibling struct {
	RFilename string `json:"rfilename"`
	Size      *int64 `json:"size,omitempty"`   // with blobs=true
	BlobID    string `json:"blobId,omitempty"` // with blobs=true
}

// Record returns the space as the API shows it.
func Record(sp *hubemu.Space) SpaceRecord {
	rec := SpaceRecord{MongoID: sp.RepoID, ID: sp.Name, Author: sp.Owner, SHA: sp.HeadSha, LastModified: sp.LastModified,
		CreatedAt: sp.CreatedAt, Private: sp.Private, SDK: sp.SDK, Tags: sp.Tags, CardData: sp.CardData,
		Subdomain: hubemu.Subdomain(sp.Name), Siblings: make([]Sibling, len(sp.Files))}
	for i, f := range sp.Files {
		rec.Siblings[i] = Sibling{RFilename: f}
	}
	if rec.Tags == nil {
		rec.Tags = []string{}
	}
	if rec.CardData == nil {
		rec.CardData = map[string]any{}
	}
	return rec
}

// SpaceAt returns the space name as it is at a revision (space_info(revision=...), the first call
// of snapshot_download): sha is the resolved commit, siblings its files, cardData and tags its
// README's. With blobs, each sibling has its size and blob ID.
func (s *Service) SpaceAt(ctx context.Context, viewer *hubemu.Principal, name, rev string, blobs bool) (*SpaceRecord, error) {
	sp, err := s.SpaceFor(ctx, viewer, name)
	if err != nil {
		return nil, err
	}
	at, err := s.git.Resolve(ctx, sp.Name, rev)
	if err != nil {
		return nil, err
	}
	snap, err := s.git.Snapshot(ctx, sp.Name, at.Commit)
	if err != nil {
		return nil, err
	}
	card := parseFrontMatter(snap.Readme)
	view := *sp
	view.HeadSha, view.LastModified, view.CardData, view.Files = at.Commit, snap.Modified, card, snap.Files
	view.Tags = spaceTags(card, sp.SDK)
	rec := Record(&view)
	if blobs {
		entries, err := s.git.Tree(ctx, sp.Name, at.Commit, "", true)
		if err != nil {
			return nil, err
		}
		rec.Siblings = rec.Siblings[:0]
		for _, en := range entries {
			if en.Type == "blob" {
				size := en.Size
				rec.Siblings = append(rec.Siblings, Sibling{RFilename: en.Path, Size: &size, BlobID: en.OID})
			}
		}
	}
	return &rec, nil
}

// SpaceTree lists the folder dir of the space name at a revision, or with recursive everything
// below it, folders included. It returns the commit the revision named even with an error of the
// folder, so that the caller can say at which commit it is missing.
func (s *Service) SpaceTree(ctx context.Context, viewer *hubemu.Principal, name, rev, dir string, recursive bool) (string, []TreeEntry, error) {
	sp, err := s.SpaceFor(ctx, viewer, name)
	if err != nil {
		return "", nil, err
	}
	at, err := s.git.Resolve(ctx, sp.Name, rev)
	if err != nil {
		return "", nil, err
	}
	entries, err := s.git.Tree(ctx, sp.Name, at.Commit, dir, recursive)
	return at.Commit, entries, err
}

// SpaceFile returns the file at path of the space name at a revision, and the commit the revision
// named (also with a missing file's EntryNotFound).
func (s *Service) SpaceFile(ctx context.Context, viewer *hubemu.Principal, name, rev, path string) (string, TreeEntry, error) {
	sp, err := s.SpaceFor(ctx, viewer, name)
	if err != nil {
		return "", TreeEntry{}, err
	}
	at, err := s.git.Resolve(ctx, sp.Name, rev)
	if err != nil {
		return "", TreeEntry{}, err
	}
	if _, err := CheckRepoPath(path); err != nil {
		return at.Commit, TreeEntry{}, EntryNotFound("%s has no file %q", ShortID(at.Commit), path)
	}
	blob, err := s.git.Entry(ctx, sp.Name, at.Commit, path)
	if err != nil {
		return at.Commit, TreeEntry{}, err
	}
	if blob.Type != "blob" {
		return at.Commit, TreeEntry{}, EntryNotFound("%s is not a file of %s at %s", path, sp.Name, ShortID(at.Commit))
	}
	return at.Commit, blob, nil
}

// OpenFile opens a file that SpaceFile returned, to read and seek in.
func (s *Service) OpenFile(ctx context.Context, name string, blob TreeEntry) (io.ReadSeekCloser, error) {
	return s.git.OpenBlob(ctx, name, blob)
}

// PreuploadFile is a file a client is about to commit.
type PreuploadFile struct {
	Path   string `json:"path"`
	Sample string `json:"sample"`
	Size   int64  `json:"size"`
}

// PreuploadAnswer says how a file is to be sent.
type PreuploadAnswer struct {
	Path         string  `json:"path"`
	UploadMode   string  `json:"uploadMode"`
	ShouldIgnore bool    `json:"shouldIgnore"`
	OID          *string `json:"oid,omitempty"`
}

// maxGitignoreBytes caps the .gitignore read from a revision.
const maxGitignoreBytes = 1 << 20

// Preupload answers how each file of a coming commit to the space name at rev is to be sent.
// Every file is "regular" (inline in the commit): this hub has no LFS storage, and the commit
// refuses files over MaxInlineFileBytes with the public hub's message. oid is the file's blob ID at
// the revision, so that the client leaves out unchanged files; shouldIgnore follows the .gitignore
// sent (or the revision's).
func (s *Service) Preupload(ctx context.Context, p hubemu.Principal, name, rev string, files []PreuploadFile, gitIgnore *string) ([]PreuploadAnswer, error) {
	sp, err := s.writableSpace(ctx, p, name)
	if err != nil {
		return nil, err
	}
	blobs := map[string]string{}
	ignore := ""
	refs, err := s.git.Refs(ctx, sp.Name)
	if err != nil {
		return nil, err
	}
	if _, head, err := commitTarget(rev, refs); err != nil {
		return nil, err
	} else if head != "" {
		entries, err := s.git.Tree(ctx, sp.Name, head, "", true)
		if err != nil {
			return nil, err
		}
		for _, en := range entries {
			if en.Type != "blob" {
				continue
			}
			blobs[en.Path] = en.OID
			if en.Path == ".gitignore" && gitIgnore == nil {
				if data, err := s.git.ReadBlob(ctx, sp.Name, en.OID, maxGitignoreBytes); err == nil {
					ignore = string(data)
				}
			}
		}
	}
	if gitIgnore != nil {
		ignore = *gitIgnore
	}
	matcher := ignoreMatcher(ignore)
	out := make([]PreuploadAnswer, len(files))
	for i, f := range files {
		path, err := CheckNewPath(f.Path)
		if err != nil {
			return nil, errorf(fault.Invalid, "files[%d].path: %v", i, err)
		}
		out[i] = PreuploadAnswer{Path: f.Path, UploadMode: "regular", ShouldIgnore: matcher.Match(strings.Split(path, "/"), false)}
		if oid, ok := blobs[path]; ok {
			out[i].OID = &oid
		}
	}
	return out, nil
}

// ignoreMatcher reads .gitignore content with git's rules.
func ignoreMatcher(content string) gitignore.Matcher {
	var patterns []gitignore.Pattern
	for _, line := range strings.Split(content, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		patterns = append(patterns, gitignore.ParsePattern(line, nil))
	}
	return gitignore.NewMatcher(patterns)
}

// CardProblem says what keeps a README's front matter from being read, or "" when it reads (a
// README without front matter reads: it has no metadata).
func CardProblem(readme []byte) string {
	text, first, err := card.Split(readme)
	if errors.Is(err, card.ErrNoCard) {
		return ""
	}
	if err != nil {
		return err.Error()
	}
	doc, err := card.Parse(text, first)
	if err != nil {
		return err.Error()
	}
	if doc == nil {
		return ""
	}
	if _, ok := card.Data(doc).(map[string]any); !ok {
		return "the front matter is not a mapping of keys to values"
	}
	return ""
}

// Push runs serve, a push to the space sp by its owner, holding the space's lock so that the refs
// before and after are this push's alone; then it records and announces what the push changed
// (tags read again, repo.content emitted). A push that changed nothing emits nothing. The record is
// made even if the client hung up after the push.
func (s *Service) Push(ctx context.Context, by hubemu.Principal, sp *hubemu.Space, serve func()) error {
	unlock, err := s.locks.lock(ctx, sp.Name)
	if err != nil {
		return err
	}
	defer unlock()
	before, err := s.git.Refs(ctx, sp.Name)
	if err != nil {
		return fmt.Errorf("reading the refs of %s: %w", sp.Name, err)
	}
	serve()
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := s.afterPush(bg, by, sp, before); err != nil {
		s.log.Error("recording a push", "space", sp.Name, "err", err)
	}
	return nil
}

// afterPush compares the refs with those before the push, and records and announces what changed.
func (s *Service) afterPush(ctx context.Context, by hubemu.Principal, sp *hubemu.Space, before map[string]string) error {
	after, err := s.git.Refs(ctx, sp.Name)
	if err != nil {
		return err
	}
	changes := diffRefs(before, after)
	if len(changes) == 0 {
		return nil
	}
	mainSha := after[MainRef]
	head, err := s.git.Snapshot(ctx, sp.Name, mainSha)
	if err != nil {
		return err
	}
	res, err := s.recordPush(ctx, by, sp, changes, mainSha, head)
	if err != nil {
		return err
	}
	s.log.Info("space pushed", "space", sp.Name, "by", by.User.Name, "refs", len(changes), "head", mainSha, "deliveries", len(res.Deliveries))
	return nil
}
