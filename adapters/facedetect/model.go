package facedetect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/robothub/robothub/core/hub"
)

// The face model the daemon downloads by default: YuNet, OpenCV's face detector, which the public
// daemon runs, from its model repo on the hub. Both are flags of robot-daemon.
const (
	DefaultModelRepo = "opencv/face_detection_yunet"
	DefaultModelFile = "face_detection_yunet_2023mar.onnx"
)

// FetchModel returns the path of file of the model repo repo, downloaded from the hub into
// cacheDir (the hub's own cache layout, as the public client keeps it) or, when the hub cannot be
// reached or c is nil, the copy an earlier download left there.
func FetchModel(ctx context.Context, c *hub.Client, repo, file, cacheDir string) (string, error) {
	var snap *hub.Snapshot
	var err error
	if c != nil {
		snap, err = c.SnapshotDownload(ctx, "model", repo, "", cacheDir, func(f string) bool { return f == file })
	} else {
		snap, err = hub.CachedSnapshot(cacheDir, "model", repo, "main")
	}
	if err != nil {
		return "", fmt.Errorf("the face model %s of model repo %s: %w", file, repo, err)
	}
	p := filepath.Join(snap.Dir, filepath.FromSlash(file))
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("model repo %s has no file %s", repo, file)
	}
	return p, nil
}
