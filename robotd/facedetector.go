package robotd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/robothub/robothub/adapters/facedetect"
	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/core/version"
)

// Head tracking's face detector (adapters/facedetect): ONNX Runtime's shared library, found by
// --onnxruntime, $ORT_DYLIB_PATH or the usual library folders, and a face model downloaded from a
// model repo of the hub, as the public daemon downloads YuNet, into <data-dir>/models. Both are
// loaded in the background at start; until then, and when either is missing, starting head
// tracking answers 503 naming what is missing and where it was looked for.

// loadFaceDetector gives rb its face detector, or the reason it has none, and closes the detector
// when ctx ends.
func loadFaceDetector(ctx context.Context, cfg Config, getenv func(string) string, rb *robot.Robot, log *slog.Logger) {
	d, err := newFaceDetector(ctx, cfg, getenv)
	if err != nil {
		rb.SetDetector(nil, err.Error())
		log.Info("head tracking is not available", "err", err)
		return
	}
	rb.SetDetector(d, "")
	log.Info("head tracking's face detector is ready", "model", d.Model, "repo", cfg.Face.Repo, "file", cfg.Face.File)
	<-ctx.Done()
	rb.StopTracking()
	rb.SetDetector(nil, "the daemon is stopping")
	d.Close()
}

func newFaceDetector(ctx context.Context, cfg Config, getenv func(string) string) (*facedetect.Detector, error) {
	rt, rtErr := facedetect.FindRuntime(cfg.Face.Runtime, getenv)
	var c *hub.Client
	if cfg.HubURL != "" {
		var err error
		if c, err = hub.New(cfg.HubURL, hub.WithToken(cfg.HubToken), hub.WithUserAgent("robot-daemon/"+version.String()), hub.WithDownloadCaps(0, cfg.MaxDownloadBytes)); err != nil {
			return nil, fmt.Errorf("--hub-url: %w", err)
		}
	}
	path, modelErr := facedetect.FetchModel(ctx, c, cfg.Face.Repo, cfg.Face.File, filepath.Join(cfg.DataDir, "models"))
	if err := errors.Join(rtErr, modelErr); err != nil {
		return nil, err
	}
	model, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d, err := facedetect.New(rt, model, facedetect.Options{})
	if err != nil {
		return nil, fmt.Errorf("the face model %s of %s: %w", cfg.Face.File, cfg.Face.Repo, err)
	}
	return d, nil
}
