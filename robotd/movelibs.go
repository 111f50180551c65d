package robotd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/robotd/robotapi"
)

// DefaultMoveLibraries are the move libraries the public daemon downloads at start, by their
// dataset IDs on the public hub: apps name them so (robot_sdk.motion.recorded_move).
var DefaultMoveLibraries = []string{
	"pollen-robotics/reachy-mini-emotions-library",
	"pollen-robotics/reachy-mini-dances-library",
}

// HubMoveLibraries downloads move libraries from a hub with core/hub's download API into a cache
// folder, and keeps each open once read: as the public daemon reads its cache before the network,
// a library is downloaded once per daemon (restart the daemon to see a new revision). A library
// downloaded once is read from the cache when the hub cannot be reached.
type HubMoveLibraries struct {
	hub      *hub.Client // nil: no hub (--hub-url none): only what the cache holds
	cacheDir string
	log      *slog.Logger

	mu   sync.Mutex
	libs map[string]*robot.MoveLibrary
	busy map[string]chan struct{} // a download under way, closed when it ends
}

// NewHubMoveLibraries returns the move libraries of hub (nil: none), cached in cacheDir.
func NewHubMoveLibraries(c *hub.Client, cacheDir string, log *slog.Logger) *HubMoveLibraries {
	return &HubMoveLibraries{hub: c, cacheDir: cacheDir, log: log, libs: map[string]*robot.MoveLibrary{}, busy: map[string]chan struct{}{}}
}

// moveFile is what a move library's download keeps: the moves and their sounds.
func moveFile(name string) bool {
	if strings.HasSuffix(name, ".json") {
		return true
	}
	for _, ext := range robot.SoundExtensions {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// Library returns the library of a dataset, downloading it the first time. Two requests for the
// same library share one download.
func (h *HubMoveLibraries) Library(ctx context.Context, dataset string) (*robot.MoveLibrary, error) {
	if err := CheckDatasetID(dataset); err != nil {
		return nil, err
	}
	for {
		h.mu.Lock()
		if lib := h.libs[dataset]; lib != nil {
			h.mu.Unlock()
			return lib, nil
		}
		wait, busy := h.busy[dataset]
		if !busy {
			done := make(chan struct{})
			h.busy[dataset] = done
			h.mu.Unlock()
			lib, err := h.download(ctx, dataset)
			h.mu.Lock()
			if err == nil {
				h.libs[dataset] = lib
			}
			delete(h.busy, dataset)
			close(done)
			h.mu.Unlock()
			return lib, err
		}
		h.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (h *HubMoveLibraries) download(ctx context.Context, dataset string) (*robot.MoveLibrary, error) {
	var snap *hub.Snapshot
	var err error
	if h.hub == nil {
		snap, err = hub.CachedSnapshot(h.cacheDir, "dataset", dataset, "main")
		if err != nil {
			return nil, fault.NotFoundf("move library %s: this daemon has no hub (--hub-url none) and never downloaded it", dataset)
		}
	} else {
		snap, err = h.hub.SnapshotDownload(ctx, "dataset", dataset, "main", h.cacheDir, moveFile)
		var te *hub.TransportError
		var he *hub.Error
		switch {
		case errors.Is(err, fault.ErrNotFound) || errors.Is(err, fault.ErrUnauthenticated):
			// The public hub answers 401 for a repository it does not show to this caller.
			return nil, fault.NotFoundf("move library %s: no such dataset on the hub %s", dataset, h.hub.Endpoint())
		case errors.As(err, &te) || (errors.As(err, &he) && he.Status >= 500):
			return nil, fault.Unavailablef("move library %s: the hub %s cannot be reached and the dataset was never downloaded: %v", dataset, h.hub.Endpoint(), err)
		case err != nil:
			return nil, fmt.Errorf("move library %s: %w", dataset, err)
		}
		if snap.Cached {
			h.log.Warn("the hub cannot be reached: using the move library downloaded before", "dataset", dataset, "commit", snap.Commit)
		}
	}
	lib, err := robot.OpenMoveLibrary(dataset, os.DirFS(snap.Dir), snap.Dir)
	if err != nil {
		return nil, err
	}
	h.log.Info("move library ready", "dataset", dataset, "commit", snap.Commit, "moves", len(lib.Moves()))
	return lib, nil
}

// Preload downloads the libraries in the background, as the public daemon does at start, so that
// the first play does not wait for the hub; a failure is logged and tried again on first use.
func (h *HubMoveLibraries) Preload(ctx context.Context, datasets []string) {
	for _, d := range datasets {
		go func() {
			if _, err := h.Library(ctx, d); err != nil && ctx.Err() == nil {
				h.log.Warn("move library not preloaded", "dataset", d, "err", err)
			}
		}()
	}
}

// CheckDatasetID accepts a repository ID as the hub does: name or owner/name, each part of letters,
// digits, '-', '_' and '.'.
func CheckDatasetID(id string) error {
	parts := strings.Split(id, "/")
	if len(parts) > 2 {
		return fault.Invalidf("dataset %q is not a dataset ID (name or owner/name: letters, digits, '-', '_', '.'): it has %d parts", id, len(parts))
	}
	for _, part := range parts {
		if part == "" || part == "." || part == ".." || strings.Trim(part, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != "" {
			return fault.Invalidf("dataset %q is not a dataset ID (name or owner/name: letters, digits, '-', '_', '.')", id)
		}
	}
	return nil
}

// MoveLibraries finds move libraries (datasets on the hub) by their dataset ID, owner/name.
type MoveLibraries = robotapi.MoveLibraries
