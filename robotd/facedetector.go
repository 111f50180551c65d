package robotd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

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

// faceFlags are the face detector's options.
var faceFlags = []cli.Flag{
	&cli.StringFlag{Name: "onnxruntime", Usage: "ONNX Runtime's shared library for head tracking's face detector (default $" + facedetect.LibraryEnv + ", else libonnxruntime in the usual library folders)"},
	&cli.StringFlag{Name: "face-model-repo", Value: facedetect.DefaultModelRepo, Usage: "the model repo on the hub head tracking's face model comes from (YuNet or BlazeFace, ONNX)"},
	&cli.StringFlag{Name: "face-model-file", Value: facedetect.DefaultModelFile, Usage: "the face model's file in --face-model-repo"},
}

func faceConfigFrom(c *cli.Context) (FaceConfig, error) {
	fc := FaceConfig{Runtime: c.String("onnxruntime"), Repo: strings.TrimSpace(c.String("face-model-repo")), File: strings.TrimSpace(c.String("face-model-file"))}
	if err := CheckDatasetID(fc.Repo); err != nil {
		return fc, fmt.Errorf("--face-model-repo: %q is not a model repo ID (owner/name)", fc.Repo)
	}
	if fc.File == "" || strings.Contains(fc.File, "..") || strings.HasPrefix(fc.File, "/") {
		return fc, fmt.Errorf("--face-model-file: %q is not a file of a repo", fc.File)
	}
	return fc, nil
}

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
