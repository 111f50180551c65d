package http

import (
	"crypto/sha1"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/spaces"
)

// Datasets and models are served read only from a directory each (localhub.Config.DatasetsDir and
// ModelsDir), one folder per repo (<owner>/<name>/), for what downloads them with the hub's download
// API (core/hub's SnapshotDownload, the public client's snapshot_download): the robot daemon's move
// libraries and face model in the tests, and what a robot without the public hub needs. Such a repo
// is public and has one revision, main, whose commit ID is a hash of its files' names and contents
// (the same files, the same ID).

// maxDatasetFiles bounds the files of one dataset or model that are listed and hashed.
const maxDatasetFiles = 10_000

// servedRepo is a kind of repo served read only from a directory ("" serves none).
type servedRepo struct {
	kind string // "dataset" or "model"
	root string
}

// repo returns a repo's folder, its files and its commit ID.
func (sr servedRepo) repo(r *http.Request) (dir string, files []string, commit string, err error) {
	owner, name := r.PathValue("owner"), r.PathValue("name")
	id := owner + "/" + name
	notFound := &fault.Error{Kind: fault.NotFound, Code: "RepoNotFound", Msg: "Repository not found: " + sr.kind + " " + id}
	if sr.root == "" || spaces.CheckRepoName(owner) != nil || spaces.CheckRepoName(name) != nil {
		return "", nil, "", notFound
	}
	dir = filepath.Join(sr.root, owner, name)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", nil, "", notFound
	}
	h := sha1.New()
	err = fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && len(files) < maxDatasetFiles {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", nil, "", err
	}
	slices.Sort(files)
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return "", nil, "", err
		}
		sum := sha1.Sum(data)
		h.Write([]byte(f + "\x00"))
		h.Write(sum[:])
	}
	return dir, files, hex.EncodeToString(h.Sum(nil)), nil
}

// revision checks that rev is main or the repo's commit.
func (sr servedRepo) revision(rev, commit, id string) error {
	if rev == "main" || rev == commit {
		return nil
	}
	return &fault.Error{Kind: fault.NotFound, Code: "RevisionNotFound", Msg: "Invalid rev id: " + rev + " (" + sr.kind + " " + id + " has main only)"}
}

func (sr servedRepo) handleRevision(w http.ResponseWriter, r *http.Request, _ *hubemu.Principal) error {
	_, files, commit, err := sr.repo(r)
	if err != nil {
		return err
	}
	id := r.PathValue("owner") + "/" + r.PathValue("name")
	if err := sr.revision(r.PathValue("rev"), commit, id); err != nil {
		return err
	}
	siblings := make([]spaces.Sibling, len(files))
	for i, f := range files {
		siblings[i] = spaces.Sibling{RFilename: f}
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "sha": commit, "private": false, "siblings": siblings})
	return nil
}

func (sr servedRepo) handleResolve(w http.ResponseWriter, r *http.Request, _ *hubemu.Principal) error {
	dir, files, commit, err := sr.repo(r)
	if err != nil {
		return err
	}
	id := r.PathValue("owner") + "/" + r.PathValue("name")
	if err := sr.revision(r.PathValue("rev"), commit, id); err != nil {
		return err
	}
	file := r.PathValue("path")
	if !slices.Contains(files, file) { // only what the listing names: no "..", no links
		return &fault.Error{Kind: fault.NotFound, Code: "EntryNotFound", Msg: file + " is not a file of " + sr.kind + " " + id}
	}
	w.Header().Set("X-Repo-Commit", commit)
	if ctype := mime.TypeByExtension(path.Ext(file)); ctype != "" {
		w.Header().Set("Content-Type", ctype)
	}
	http.ServeFile(w, r, filepath.Join(dir, filepath.FromSlash(file)))
	return nil
}
