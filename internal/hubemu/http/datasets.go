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

// Datasets are served read only from a directory (localhub.Config.DatasetsDir), one folder per dataset
// (<owner>/<name>/), for what downloads them with the hub's download API (core/hub's
// SnapshotDownload, the public client's snapshot_download(repo_type="dataset")): the robot
// daemon's move libraries in the tests, and datasets a robot without the public hub needs. A
// dataset is public and has one revision, main, whose commit ID is a hash of its files' names and
// contents (the same files, the same ID).

// maxDatasetFiles bounds the files of one dataset that are listed and hashed.
const maxDatasetFiles = 10_000

// dataset returns a dataset's folder, its files and its commit ID.
func (s *Server) dataset(r *http.Request) (dir string, files []string, commit string, err error) {
	owner, name := r.PathValue("owner"), r.PathValue("name")
	id := owner + "/" + name
	notFound := &fault.Error{Kind: fault.NotFound, Code: "RepoNotFound", Msg: "Repository not found: dataset " + id}
	if s.datasetsDir == "" || spaces.CheckRepoName(owner) != nil || spaces.CheckRepoName(name) != nil {
		return "", nil, "", notFound
	}
	dir = filepath.Join(s.datasetsDir, owner, name)
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

// datasetRevision checks that rev is main or the dataset's commit.
func datasetRevision(rev, commit, id string) error {
	if rev == "main" || rev == commit {
		return nil
	}
	return &fault.Error{Kind: fault.NotFound, Code: "RevisionNotFound", Msg: "Invalid rev id: " + rev + " (dataset " + id + " has main only)"}
}

func (s *Server) handleDatasetRevision(w http.ResponseWriter, r *http.Request, _ *hubemu.Principal) error {
	_, files, commit, err := s.dataset(r)
	if err != nil {
		return err
	}
	id := r.PathValue("owner") + "/" + r.PathValue("name")
	if err := datasetRevision(r.PathValue("rev"), commit, id); err != nil {
		return err
	}
	siblings := make([]spaces.Sibling, len(files))
	for i, f := range files {
		siblings[i] = spaces.Sibling{RFilename: f}
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "sha": commit, "private": false, "siblings": siblings})
	return nil
}

func (s *Server) handleDatasetResolve(w http.ResponseWriter, r *http.Request, _ *hubemu.Principal) error {
	dir, files, commit, err := s.dataset(r)
	if err != nil {
		return err
	}
	id := r.PathValue("owner") + "/" + r.PathValue("name")
	if err := datasetRevision(r.PathValue("rev"), commit, id); err != nil {
		return err
	}
	file := r.PathValue("path")
	if !slices.Contains(files, file) { // only what the listing names: no "..", no links
		return &fault.Error{Kind: fault.NotFound, Code: "EntryNotFound", Msg: file + " is not a file of dataset " + id}
	}
	w.Header().Set("X-Repo-Commit", commit)
	if ctype := mime.TypeByExtension(path.Ext(file)); ctype != "" {
		w.Header().Set("Content-Type", ctype)
	}
	http.ServeFile(w, r, filepath.Join(dir, filepath.FromSlash(file)))
	return nil
}
