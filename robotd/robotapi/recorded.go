package robotapi

import (
	"context"
	"encoding/json"
	"net/http"

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

// datasetOf is the dataset ID of a request's {owner}/{dataset}.
func datasetOf(r *http.Request) string { return r.PathValue("owner") + "/" + r.PathValue("dataset") }

func (s *Handlers) ListRecordedMoves(w http.ResponseWriter, r *http.Request) {
	lib, err := s.library(r.Context(), datasetOf(r))
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, lib.Moves())
}

// PlayRecordedMove plays a move of a library on the robot, as the public daemon does: the
// answer is the move's uuid, its end is seen in the state (or waited for with the move's duration).
func (s *Handlers) PlayRecordedMove(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("move")
	lib, err := s.library(r.Context(), datasetOf(r))
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
	name := r.PathValue("move")
	lib, err := s.library(r.Context(), datasetOf(r))
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
