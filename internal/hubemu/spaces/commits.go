package spaces

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/internal/hubemu"
)

// This file is the hub's commit API, which the public Python client's create_commit, upload_file and
// upload_folder (and so `hf upload`) use instead of git: POST .../commit/{revision} with NDJSON
// lines (a header, then files in base64, deleted files and deleted folders). Each commit becomes a
// git commit on the branch, made with git fast-import while the space's pushes wait, and is then
// recorded and announced exactly as a push is (afterPush): tags re-read, repo.content emitted.

// Limits of the commit API.
const (
	// MaxInlineFileBytes is the largest file a commit may carry inline: the public hub refuses
	// larger ones with a message that points to LFS, which this emulator does not store.
	MaxInlineFileBytes = 10 << 20
	// maxCommitBodyBytes caps a commit request (base64 makes files a third larger).
	maxCommitBodyBytes = 256 << 20
	// MaxCommitOperations caps the files and deletions of one commit. The public hub's own guide
	// (hub-docs, "Repository limitations and recommendations") recommends under 100 files per commit
	// through its API and under 100k files per repo; huggingface_hub's upload_large_folder commits at
	// most 1,000 files at a time (COMMIT_SIZE_SCALE) and refuses folders of over 100k files
	// (MAX_FILES_PER_REPO). A commit may not do more than a repo may hold: 100,000, which this hub
	// plans and writes in seconds (BenchmarkCommit), so that no commit holds a space's lock for long.
	MaxCommitOperations = 100_000
	// maxCommitLineBytes caps one NDJSON line: a file at the inline limit, in base64, with its path.
	maxCommitLineBytes = MaxInlineFileBytes/3*4 + 64<<10
)

// CommitResult is the answer of a commit, in the public hub's shape.
type CommitResult struct {
	Success        bool    `json:"success"`
	CommitOID      string  `json:"commitOid"`
	CommitURL      string  `json:"commitUrl"`
	PullRequestURL *string `json:"pullRequestUrl"`
}

// commitOp is one operation of a commit. A file's content waits in the commit's spool file at
// [offset, offset+size).
type commitOp struct {
	kind   string // file, deletedFile, deletedFolder
	path   string
	offset int64
	size   int64
}

// commitRequest is a parsed commit: its header and operations, the files' contents in spool.
type commitRequest struct {
	summary, description, parentCommit string
	ops                                []commitOp
	spool                              *os.File
}

func (c *commitRequest) close() {
	if c.spool != nil {
		c.spool.Close()
		os.Remove(c.spool.Name())
	}
}

type commitLine struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

type commitHeader struct {
	Summary      string `json:"summary"`
	Description  string `json:"description"`
	ParentCommit string `json:"parentCommit"`
}

type commitFile struct {
	Path     string `json:"path"`
	Content  string `json:"content"`
	Encoding string `json:"encoding"`
}

// parseCommit reads an NDJSON commit body, checks every line, and decodes the files into a spool
// file in dir. Nothing of the repository is touched: a bad line refuses the whole commit.
func parseCommit(body io.Reader, dir string) (*commitRequest, error) {
	spool, err := os.CreateTemp(dir, "commit-*.tmp")
	if err != nil {
		return nil, err
	}
	req := &commitRequest{spool: spool}
	if err := req.read(body); err != nil {
		req.close()
		return nil, err
	}
	return req, nil
}

func (req *commitRequest) read(body io.Reader) error {
	br := bufio.NewReaderSize(io.LimitReader(body, maxCommitBodyBytes+1), 64<<10)
	var total int64
	var tooLarge []string
	haveHeader := false
	for n := 1; ; n++ {
		line, err := readLine(br, maxCommitLineBytes)
		total += int64(len(line))
		if total > maxCommitBodyBytes {
			return errorf(fault.Invalid, "the commit is larger than %d MiB: split it into several commits", maxCommitBodyBytes>>20)
		}
		if errors.Is(err, errLineTooLong) {
			return errorf(fault.Invalid, "line %d: longer than %d bytes: a file over %d MiB cannot be sent inline", n, maxCommitLineBytes, MaxInlineFileBytes>>20)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return errorf(fault.Invalid, "reading the commit: %v", err)
		}
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			if err := req.readOp(n, trimmed, &haveHeader, &tooLarge); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	switch {
	case !haveHeader:
		return errorf(fault.Invalid, "the commit has no header line: send {\"key\": \"header\", \"value\": {\"summary\": ...}} first, as application/x-ndjson")
	case len(tooLarge) > 0:
		// The public hub's words, so that what users search for finds the same answers.
		return errorf(fault.Invalid, "Your push was rejected because it contains files larger than 10 MiB. Please use https://git-lfs.github.com/ to store large files. "+
			"This local hub does not store LFS files: keep each file under 10 MiB.\n\nOffending files:\n - %s", strings.Join(tooLarge, "\n - "))
	}
	return nil
}

var errLineTooLong = errors.New("line too long")

// readLine reads up to and including '\n', refusing lines over limit without buffering them.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > limit {
			return line, errLineTooLong
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, err
	}
}

func (req *commitRequest) readOp(n int, raw []byte, haveHeader *bool, tooLarge *[]string) error {
	var l commitLine
	if err := json.Unmarshal(raw, &l); err != nil {
		return errorf(fault.Invalid, "line %d: not a JSON object {\"key\", \"value\"}: %v", n, err)
	}
	if l.Key != "header" && !*haveHeader {
		return errorf(fault.Invalid, "line %d: the header must come first (got %q)", n, l.Key)
	}
	if l.Key != "header" && len(req.ops) >= MaxCommitOperations {
		return errorf(fault.Invalid, "line %d: the commit has more than %d operations (files and deletions): split it into several commits", n, MaxCommitOperations)
	}
	switch l.Key {
	case "header":
		if *haveHeader {
			return errorf(fault.Invalid, "line %d: a second header", n)
		}
		var h commitHeader
		if err := json.Unmarshal(l.Value, &h); err != nil {
			return errorf(fault.Invalid, "line %d: header: %v", n, err)
		}
		if strings.TrimSpace(h.Summary) == "" {
			return errorf(fault.Invalid, "line %d: header.summary: the commit message is empty", n)
		}
		if h.ParentCommit != "" && !isHex(h.ParentCommit, 7, 40) {
			return errorf(fault.Invalid, "line %d: header.parentCommit: %q is not a commit ID", n, h.ParentCommit)
		}
		req.summary, req.description, req.parentCommit = h.Summary, h.Description, h.ParentCommit
		*haveHeader = true
	case "file":
		var f commitFile
		if err := json.Unmarshal(l.Value, &f); err != nil {
			return errorf(fault.Invalid, "line %d: file: %v", n, err)
		}
		path, err := CheckNewPath(f.Path)
		if err != nil {
			return errorf(fault.Invalid, "line %d: file.path: %v", n, err)
		}
		var content []byte
		switch f.Encoding {
		case "base64":
			if content, err = base64.StdEncoding.DecodeString(f.Content); err != nil {
				return errorf(fault.Invalid, "line %d: file %s: the content is not base64: %v", n, path, err)
			}
		case "utf-8", "utf8":
			content = []byte(f.Content)
		default:
			return errorf(fault.Invalid, "line %d: file %s: encoding %q is not base64", n, path, f.Encoding)
		}
		if len(content) > MaxInlineFileBytes {
			*tooLarge = append(*tooLarge, path)
			return nil
		}
		offset, err := req.spool.Seek(0, io.SeekEnd)
		if err == nil {
			_, err = req.spool.Write(content)
		}
		if err != nil {
			return fmt.Errorf("spooling a commit: %w", err)
		}
		req.ops = append(req.ops, commitOp{kind: "file", path: path, offset: offset, size: int64(len(content))})
	case "deletedFile", "deletedFolder":
		var v struct {
			Path string `json:"path"`
		}
		if err := json.Unmarshal(l.Value, &v); err != nil {
			return errorf(fault.Invalid, "line %d: %s: %v", n, l.Key, err)
		}
		path, err := CheckRepoPath(strings.TrimSuffix(v.Path, "/"))
		if err != nil {
			return errorf(fault.Invalid, "line %d: %s.path: %v", n, l.Key, err)
		}
		req.ops = append(req.ops, commitOp{kind: l.Key, path: path})
	case "lfsFile":
		var v struct {
			Path string `json:"path"`
		}
		_ = json.Unmarshal(l.Value, &v)
		return errorf(fault.Invalid, "line %d: lfsFile %s: this local hub does not store LFS files (its preupload answers \"regular\" for every file): send the file inline, under 10 MiB", n, v.Path)
	default:
		return errorf(fault.Invalid, "line %d: key %q is not one of header, file, deletedFile, deletedFolder", n, l.Key)
	}
	return nil
}

func isHex(s string, minLen, maxLen int) bool {
	if len(s) < minLen || len(s) > maxLen {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// writableSpace returns the space owner/name if p may change it: its owner with a write token.
func (s *Service) writableSpace(ctx context.Context, p hubemu.Principal, name string) (*hubemu.Space, error) {
	sp, err := s.SpaceFor(ctx, &p, name)
	if err != nil {
		return nil, err
	}
	switch {
	case p.User.ID != sp.OwnerID:
		return nil, errorf(fault.Forbidden, "%s belongs to %s: you (%s) cannot change it", name, sp.Owner, p.User.Name)
	case !p.CanWrite():
		return nil, errorf(fault.Forbidden, "this token has the read role: changing %s needs a token with the write role", name)
	}
	return sp, nil
}

// Commit applies an NDJSON commit (the body of the hub's commit API) to the branch rev of the space
// owner/name and announces it as a push: a repo.content event with updatedRefs and headSha, and on
// main the tags read again from README.md.
func (s *Service) Commit(ctx context.Context, by hubemu.Principal, name, rev string, body io.Reader) (*CommitResult, error) {
	sp, err := s.writableSpace(ctx, by, name)
	if err != nil {
		return nil, err
	}
	if err := s.git.Available(); err != nil { // git must be there
		return nil, err
	}
	req, err := parseCommit(body, s.git.TempDir())
	if err != nil {
		return nil, err
	}
	defer req.close()

	// The body is read and checked; now the space's lock, for a bounded time. A client that goes
	// away while it waits, or while the commit is planned or written, stops the work (ctx).
	unlock, err := s.locks.lock(ctx, sp.Name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	locked, cancelLocked := context.WithTimeout(ctx, MaxCommitTime)
	defer cancelLocked()
	res, err := s.commitLocked(locked, by, sp, rev, req)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return nil, errorf(fault.Timeout, "the commit to %s took longer than %s and was not made: split it into smaller commits", sp.Name, MaxCommitTime)
	}
	return res, err
}

// MaxCommitTime bounds how long a commit holds its space's lock (pushes and other commits wait).
const MaxCommitTime = 2 * time.Minute

func (s *Service) commitLocked(ctx context.Context, by hubemu.Principal, sp *hubemu.Space, rev string, req *commitRequest) (*CommitResult, error) {
	before, err := s.git.Refs(ctx, sp.Name)
	if err != nil {
		return nil, fmt.Errorf("reading the refs of %s: %w", sp.Name, err)
	}
	ref, parent, err := commitTarget(rev, before)
	if err != nil {
		return nil, err
	}
	if req.parentCommit != "" && !strings.HasPrefix(parent, req.parentCommit) {
		return nil, errorf(fault.Refused, "parentCommit %s is not the head of %s (%s): the branch moved since; fetch it and commit again",
			req.parentCommit, strings.TrimPrefix(ref, "refs/heads/"), orNone(ShortID(parent)))
	}
	var files []TreeEntry
	if parent != "" {
		if files, err = s.git.Files(ctx, sp.Name, parent); err != nil {
			return nil, err
		}
	}
	modes, err := planCommit(ctx, files, req.ops)
	if err != nil {
		return nil, err
	}
	if err := s.git.WriteCommit(ctx, sp.Name, s.commitWrite(by, ref, parent, req, modes)); err != nil {
		return nil, err
	}
	// The commit is made: record it even if the client hangs up now.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := s.afterPush(ctx, by, sp, before); err != nil {
		return nil, fmt.Errorf("recording the commit to %s: %w", sp.Name, err)
	}
	after, err := s.git.Refs(ctx, sp.Name)
	if err != nil {
		return nil, err
	}
	oid := after[ref]
	return &CommitResult{Success: true, CommitOID: oid, CommitURL: s.publicURL + "/spaces/" + sp.Name + "/commit/" + oid}, nil
}

func orNone(s string) string {
	if s == "" {
		return "none yet"
	}
	return s
}

// commitIDPattern is a full commit ID.
var commitIDPattern = regexp.MustCompile(`^[0-9a-f]{40}$`)

// commitTarget returns the branch a commit goes to and its head ("" for the first commit of an
// empty space's main). Commits go to branches (and pull request refs), not to tags or commit IDs.
func commitTarget(rev string, refs map[string]string) (ref, head string, err error) {
	if rev == "" {
		rev = "main"
	}
	ref = rev
	if !strings.HasPrefix(rev, "refs/") {
		ref = "refs/heads/" + rev
	}
	if head, ok := refs[ref]; ok && (strings.HasPrefix(ref, "refs/heads/") || strings.HasPrefix(ref, "refs/pr/")) {
		return ref, head, nil
	}
	if ref == MainRef && len(refs) == 0 {
		return ref, "", nil // an empty space: the first commit makes main
	}
	if _, isTag := refs["refs/tags/"+rev]; isTag || commitIDPattern.MatchString(rev) {
		return "", "", errorf(fault.Invalid, "revision: %s is not a branch: commits go to a branch", rev)
	}
	return "", "", RevisionNotFound(rev)
}

// planCommit plays the operations on the parent's files and returns the mode of each added file
// (an executable keeps its mode when replaced). It refuses what the hub refuses: deleting what is
// not there, and a file where a folder is (or the reverse). It runs in time linear in the paths'
// lengths (a tree of the files, each folder counting the files below it: every operation walks
// its own path once), and stops when ctx ends.
func planCommit(ctx context.Context, parent []TreeEntry, ops []commitOp) (map[string]string, error) {
	root := &planNode{}
	for _, e := range parent {
		if e.Type == "blob" || e.Type == "commit" {
			root.add(e.Path, e.Mode)
		}
	}
	modes := map[string]string{}
	for i, op := range ops {
		if i%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		switch op.kind {
		case "deletedFile":
			if !root.removeFile(op.path) {
				if root.isDir(op.path) {
					return nil, EntryNotFound("A file with this name doesn't exist: %s is a folder (delete it with deletedFolder)", op.path)
				}
				return nil, EntryNotFound("A file with this name doesn't exist: %s", op.path)
			}
		case "deletedFolder":
			if !root.removeFolder(op.path) {
				return nil, EntryNotFound("A folder with this name doesn't exist: %s", op.path)
			}
		case "file":
			if root.isDir(op.path) {
				return nil, errorf(fault.Invalid, "file %s: a folder of that name exists (delete it in the same commit first)", op.path)
			}
			mode := "100644"
			if old, _ := root.file(op.path); old == "100755" {
				mode = "100755"
			}
			if blocker := root.add(op.path, mode); blocker != "" {
				return nil, errorf(fault.Invalid, "file %s: %s is a file, not a folder", op.path, blocker)
			}
			modes[op.path] = mode
		}
	}
	return modes, nil
}

// planNode is a file (mode set) or a folder of a commit's plan. A folder counts the files below
// it; one that has none is removed, as git has no empty folders.
type planNode struct {
	mode     string
	files    int
	children map[string]*planNode
}

// walk returns the nodes along path, from the root's child down, as far as they exist.
func (n *planNode) walk(path string) []*planNode {
	var out []*planNode
	for seg := range strings.SplitSeq(path, "/") {
		child := n.children[seg]
		if child == nil {
			break
		}
		out = append(out, child)
		n = child
	}
	return out
}

// at returns the node at path, or nil.
func (n *planNode) at(path string) (*planNode, []*planNode) {
	nodes := n.walk(path)
	if len(nodes) != strings.Count(path, "/")+1 {
		return nil, nodes
	}
	return nodes[len(nodes)-1], nodes
}

func (n *planNode) file(path string) (string, bool) {
	node, _ := n.at(path)
	if node == nil || node.mode == "" {
		return "", false
	}
	return node.mode, true
}

func (n *planNode) isDir(path string) bool {
	node, _ := n.at(path)
	return node != nil && node.mode == "" && node.files > 0
}

// add makes path a file of mode, with the folders above it, or replaces the file there. When a
// folder of its path is a file, it changes nothing and returns that file's path.
func (n *planNode) add(path, mode string) (blocker string) {
	segs := strings.Split(path, "/")
	node := n
	var along []*planNode
	for i, seg := range segs {
		if node.mode != "" {
			return strings.Join(segs[:i], "/")
		}
		child := node.children[seg]
		if child == nil {
			if node.children == nil {
				node.children = map[string]*planNode{}
			}
			child = &planNode{}
			node.children[seg] = child
		}
		along = append(along, node)
		node = child
	}
	isNew := node.mode == ""
	node.mode = mode
	if isNew {
		for _, a := range along {
			a.files++
		}
	}
	return ""
}

func (n *planNode) removeFile(path string) bool {
	node, nodes := n.at(path)
	if node == nil || node.mode == "" {
		return false
	}
	n.detach(path, nodes, 1)
	return true
}

func (n *planNode) removeFolder(path string) bool {
	node, nodes := n.at(path)
	if node == nil || node.mode != "" || node.files == 0 {
		return false
	}
	n.detach(path, nodes, node.files)
	return true
}

// detach removes the last of nodes (the node at path) and its files from the counts above it,
// dropping the folders left without files.
func (n *planNode) detach(path string, nodes []*planNode, files int) {
	segs := strings.Split(path, "/")
	n.files -= files
	for i := range len(nodes) - 1 {
		nodes[i].files -= files
	}
	parents := append([]*planNode{n}, nodes[:len(nodes)-1]...)
	for i := len(nodes) - 1; i >= 0; i-- {
		delete(parents[i].children, segs[i])
		if i == 0 || parents[i].files > 0 {
			break
		}
	}
}

// commitWrite is the commit the API request asks for.
func (s *Service) commitWrite(by hubemu.Principal, ref, parent string, req *commitRequest, modes map[string]string) CommitWrite {
	message := strings.TrimSpace(req.summary)
	if d := strings.TrimSpace(req.description); d != "" {
		message += "\n\n" + d
	}
	c := CommitWrite{Ref: ref, Parent: parent, Author: s.commitIdentity(by), When: s.hub.Now(), Message: message + "\n"}
	for _, op := range req.ops {
		switch op.kind {
		case "deletedFile", "deletedFolder":
			c.Changes = append(c.Changes, FileChange{Path: op.path, Delete: true})
		case "file":
			c.Changes = append(c.Changes, FileChange{Path: op.path, Mode: modes[op.path], Content: io.NewSectionReader(req.spool, op.offset, op.size)})
		}
	}
	return c
}

// commitIdentity is the author and committer of commits made through the API.
func (s *Service) commitIdentity(by hubemu.Principal) string {
	host := strings.TrimPrefix(strings.TrimPrefix(s.publicURL, "http://"), "https://")
	host, _, _ = strings.Cut(host, "/")
	host, _, _ = strings.Cut(host, ":")
	return by.User.Name + " <" + by.User.Name + "@users.noreply." + host + ">"
}
