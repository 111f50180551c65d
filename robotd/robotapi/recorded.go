package robotapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/robot"

	"github.com/robothub/robothub/robotd/httpapi"
)

// Recorded moves: the public daemon's two routes (list a library's moves, play one) and ours that
// robot_sdk.motion.recorded_move reads a move with, so that an app plays it itself
// (Robot.play_move) as the public SDK's does after downloading the dataset.

// library returns the move library of a dataset ID.
func (s *Handlers) library(ctx context.Context, dataset string) (*robot.MoveLibrary, error) {
	if s.moves == nil {
		return nil, fault.NotFoundf("move library %s: this daemon serves no move libraries", dataset)
	}
	return s.moves.Library(ctx, dataset)
}

// A dataset's name takes any number of segments in the path, as the anchor's {dataset_name:path}
// does: "name", "owner/name", "owner%2Fname", or more segments, which the library refuses naming
// the ID (422) rather than the router answering a bare 404.

// datasetAndMove splits a request's {dataset_and_move...} at its last segment: the dataset's name
// before, the move's after. It splits the escaped path, so that an encoded %2F in the dataset's
// name is a slash of the name and one in the move's name stays in the move's name.
func datasetAndMove(r *http.Request, prefix string) (dataset, move string, err error) {
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), prefix)
	i := strings.LastIndexByte(rest, '/')
	if !ok || i <= 0 || i == len(rest)-1 {
		return "", "", fault.NotFoundf("name a dataset and a move: %s<dataset>/<move>", prefix)
	}
	dataset, err1 := url.PathUnescape(rest[:i])
	move, err2 := url.PathUnescape(rest[i+1:])
	if err1 != nil || err2 != nil {
		return "", "", fault.Invalidf("path %q is not escaped correctly", r.URL.EscapedPath())
	}
	return dataset, move, nil
}

// Path prefixes before {dataset_and_move...} (routes.go).
const (
	playRecordedPrefix = "/api/move/play/recorded-move-dataset/"
	getRecordedPrefix  = "/api/move/recorded-move-datasets/move/"
)

func (s *Handlers) ListRecordedMoves(w http.ResponseWriter, r *http.Request) {
	lib, err := s.library(r.Context(), r.PathValue("dataset_name"))
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, lib.Moves())
}

// PlayRecordedMove plays a move of a library on the robot, as the public daemon does: the
// answer is the move's uuid, its end is seen in the state (or waited for with the move's duration).
func (s *Handlers) PlayRecordedMove(w http.ResponseWriter, r *http.Request) {
	dataset, name, err := datasetAndMove(r, playRecordedPrefix)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	lib, err := s.library(r.Context(), dataset)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	move, err := lib.Move(name)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	m, err := s.robot.PlayRecorded(move, "recorded_move")
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, moveStarted{UUID: m.ID, Duration: m.Duration().Seconds()})
}

// GetRecordedMove answers a move's file as the dataset holds it, and where its sound is on
// the robot (for play_sound), so that the SDK's RecordedMoves reads the daemon's cache instead of
// downloading the dataset again.
func (s *Handlers) GetRecordedMove(w http.ResponseWriter, r *http.Request) {
	dataset, name, err := datasetAndMove(r, getRecordedPrefix)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	lib, err := s.library(r.Context(), dataset)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	move, err := lib.Move(name) // checked: a broken file is an error here, not in the app
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	data, _ := lib.File(name)
	var sound *string
	if move.Sound != "" {
		sound = &move.Sound
	}
	httpapi.WriteJSON(w, http.StatusOK, struct {
		Move      json.RawMessage `json:"move"`
		SoundPath *string         `json:"sound_path"`
	}{data, sound})
}
