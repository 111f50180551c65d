package robot_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/robot"
)

const movesDir = "testdata/moves"

func openTestLibrary(t *testing.T) *robot.MoveLibrary {
	t.Helper()
	abs, err := filepath.Abs(movesDir)
	if err != nil {
		t.Fatal(err)
	}
	lib, err := robot.OpenMoveLibrary("local/moves", os.DirFS(abs), abs)
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

func TestMoveLibraryListsMovesAndTheirSounds(t *testing.T) {
	lib := openTestLibrary(t)
	if got, want := lib.Moves(), []string{"antenna_wave", "look_around", "nod", "ramp"}; !slices.Equal(got, want) {
		t.Fatalf("moves %v, want %v", got, want)
	}
	nod, err := lib.Move("nod")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(nod.Sound) != "nod.wav" || nod.Description != "Nods twice, yes yes." {
		t.Fatalf("nod: sound %q, description %q", nod.Sound, nod.Description)
	}
	if d := nod.Duration(); d != 2*time.Second {
		t.Fatalf("nod lasts %v, want 2s (its last timestamp)", d)
	}
	wave, _ := lib.Move("antenna_wave")
	if wave.Sound != "" {
		t.Fatalf("antenna_wave has no sound file, got %q", wave.Sound)
	}
	_, err = lib.Move("moonwalk")
	if !errors.Is(err, fault.ErrNotFound) || !strings.Contains(err.Error(), "moonwalk") || !strings.Contains(err.Error(), "nod") {
		t.Fatalf("unknown move: %v, want not found naming it and the moves there are", err)
	}
}

// The head follows the recording: at each moment the target is the recording interpolated at the
// time since the move started, the pitch of the nod peaks at 15° half a second in, and the move
// ends at its last timestamp.
func TestPlayRecordedFollowsTheTimestamps(t *testing.T) {
	lib := openTestLibrary(t)
	nod, err := lib.Move("nod")
	if err != nil {
		t.Fatal(err)
	}
	nod.Sound = "" // the sim's speaker is not what this test looks at
	synctest.Test(t, func(t *testing.T) {
		r := newSimRobot(t)
		waitMove(t, r.WakeUp())
		start := time.Now()
		m, err := r.PlayRecorded(nod, "recorded_move")
		if err != nil {
			t.Fatal(err)
		}
		if r.MotorMode() != robot.MotorsEnabled {
			t.Fatal("motors not enabled for the move")
		}
		for _, at := range []float64{0.25, 0.5, 1.0, 1.5} {
			time.Sleep(time.Until(start.Add(time.Duration(at*float64(time.Second)) + time.Millisecond)))
			synctest.Wait()
			got := r.State().TargetHeadPose
			// The control loop set the target at its last tick, at most one period ago: the
			// target is the recording at some moment of that period.
			elapsed := time.Since(start).Seconds()
			best := math.Inf(1)
			for k := 0; k <= 100; k++ {
				tau := elapsed - robot.ControlPeriod.Seconds()*float64(k)/100
				best = math.Min(best, math.Abs(nod.At(tau).Head.Pitch-got.Pitch))
			}
			if best > 1e-6 {
				t.Fatalf("at %.3f s the pitch is %.4f rad, %.2g from the recording during the last control period", elapsed, got.Pitch, best)
			}
		}
		if p := nod.At(0.5).Head.Pitch; math.Abs(p-15*math.Pi/180) > 0.01 {
			t.Fatalf("the nod's pitch at 0.5 s is %.2f°, want 15°", p*180/math.Pi)
		}
		waitMove(t, m)
		if took := time.Since(start); took < 2*time.Second || took > 2*time.Second+2*robot.ControlPeriod {
			t.Fatalf("the move ended after %v, want its 2 s", took)
		}
		if last := r.State().TargetHeadPose; math.Abs(last.Pitch) > 1e-6 {
			t.Fatalf("after the move the pitch is %v, want the last frame's 0", last.Pitch)
		}
	})
}

func TestParseRecordedMoveNamesWhatIsWrong(t *testing.T) {
	frame := `{"head":[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]],"antennas":[0,0]}`
	for _, tc := range []struct{ name, body, want string }{
		{"not JSON", `{"time":`, "not a recorded move"},
		{"no frames", `{"time":[],"set_target_data":[]}`, "at least one frame"},
		{"lengths", `{"time":[0,1],"set_target_data":[` + frame + `]}`, "time has 2 entries but set_target_data has 1"},
		{"time back", `{"time":[0,1,0.5],"set_target_data":[` + frame + `,` + frame + `,` + frame + `]}`, "time[2]"},
		{"negative time", `{"time":[-1],"set_target_data":[` + frame + `]}`, "time[0]"},
		{"rows", `{"time":[0],"set_target_data":[{"head":[[1,0,0,0]],"antennas":[0,0]}]}`, "set_target_data[0].head: a 4×4 matrix"},
		{"scaled", `{"time":[0],"set_target_data":[{"head":[[2,0,0,0],[0,2,0,0],[0,0,2,0],[0,0,0,1]],"antennas":[0,0]}]}`, "not orthonormal"},
		{"antennas", `{"time":[0],"set_target_data":[{"head":[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]],"antennas":[0]}]}`, "set_target_data[0].antennas"},
		{"too long", `{"time":[0,601],"set_target_data":[` + frame + `,` + frame + `]}`, "at most 600 s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := robot.ParseRecordedMove([]byte(tc.body))
			if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an invalid error containing %q", err, tc.want)
			}
		})
	}
}

func TestMoveLibraryOfNoMovesIsNotFound(t *testing.T) {
	_, err := robot.OpenMoveLibrary("local/empty", os.DirFS(t.TempDir()), "")
	if !errors.Is(err, fault.ErrNotFound) || !strings.Contains(err.Error(), "local/empty") {
		t.Fatalf("got %v", err)
	}
}

// A move file is bytes from a hub: ParseRecordedMove never panics, and a move it accepts is one the
// robot can be asked to play (frames checked, times in order, within the limits).
func FuzzParseRecordedMove(f *testing.F) {
	for _, name := range []string{"nod.json", "ramp.json"} {
		data, err := os.ReadFile(filepath.Join(movesDir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"time":[0,1e308],"set_target_data":[{"head":[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]],"antennas":[0,0]},{"head":[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]],"antennas":[0,0]}]}`))
	f.Add([]byte(`{"time":[0],"set_target_data":[{"head":[[1,0,0,0],[0,1,0,0],[0,0,1,0]],"antennas":[NaN,0]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := robot.ParseRecordedMove(data)
		if err != nil {
			return
		}
		if len(m.Time) == 0 || len(m.Time) != len(m.Frames) {
			t.Fatalf("accepted %d timestamps for %d frames", len(m.Time), len(m.Frames))
		}
		for i := 1; i < len(m.Time); i++ {
			if !(m.Time[i] >= m.Time[i-1]) {
				t.Fatalf("accepted time[%d]=%v after %v", i, m.Time[i], m.Time[i-1])
			}
		}
		if d := m.Duration(); d < 0 || d > 600*time.Second {
			t.Fatalf("accepted a move of %v", d)
		}
	})
}
