package robot

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/robothub/robothub/core/fault"
)

// A move library is a dataset on the hub: one JSON file per move (at the dataset's root or in
// data/), named after the move, with an optional sound beside it (nod.json, nod.wav). A move's
// file is the public robot's recording format:
//
//	{"description": "...", "time": [t0, t1, ...],
//	 "set_target_data": [{"head": 4×4 rows, "antennas": [right, left], "body_yaw": b}, ...]}
//
// time is in seconds, one entry per frame of set_target_data; head is a homogeneous pose matrix
// (metres, radians), antennas and body_yaw are radians (body_yaw may be absent: 0).

// SoundExtensions are the sidecar sound files a move may have, in the order they are looked for.
var SoundExtensions = []string{".wav", ".mp3", ".ogg", ".oga", ".opus", ".flac", ".m4a", ".aac"}

// Limits of a recorded move: ten minutes, and one frame per millisecond at most on average.
const (
	maxRecordedSeconds = 600.0
	maxRecordedFrames  = 600_000
	// MaxRecordedMoveBytes bounds a move file: the public libraries' longest is about 1 MB.
	MaxRecordedMoveBytes = 64 << 20
)

// RecordedFrame is one frame of a recorded move as the file holds it.
type RecordedFrame struct {
	Head     [][]float64 `json:"head"`
	Antennas []float64   `json:"antennas"`
	BodyYaw  *float64    `json:"body_yaw,omitempty"`
	// CheckCollision is kept as recorded; the daemon validates every frame against the platform.
	CheckCollision *bool `json:"check_collision,omitempty"`
}

// RecordedMove is a move as recorded: frames at timestamps. Its JSON is the file's.
type RecordedMove struct {
	Description string          `json:"description"`
	Time        []float64       `json:"time"`
	Frames      []RecordedFrame `json:"set_target_data"`
	// Sound is the path of the move's sound on the robot ("" for none); not part of the file.
	Sound string `json:"-"`

	joints []Joints // the frames, checked and converted
}

// ParseRecordedMove reads and checks a move file, naming the first problem (the frame and field).
func ParseRecordedMove(data []byte) (*RecordedMove, error) {
	if len(data) > MaxRecordedMoveBytes {
		return nil, fault.Invalidf("a recorded move is at most %d MiB, this one is %d bytes", MaxRecordedMoveBytes>>20, len(data))
	}
	var m RecordedMove
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fault.Invalidf("not a recorded move (JSON with description, time, set_target_data): %v", err)
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	return &m, nil
}

// check validates the move and converts its frames.
func (m *RecordedMove) check() error {
	n := len(m.Time)
	switch {
	case n == 0:
		return fault.Invalidf("time: a recorded move needs at least one frame")
	case n != len(m.Frames):
		return fault.Invalidf("time has %d entries but set_target_data has %d frames: one time per frame", n, len(m.Frames))
	case n > maxRecordedFrames:
		return fault.Invalidf("a recorded move has at most %d frames, this one %d", maxRecordedFrames, n)
	}
	for i, t := range m.Time {
		if math.IsNaN(t) || math.IsInf(t, 0) || t < 0 {
			return fault.Invalidf("time[%d]: %g is not a time in seconds from the start", i, t)
		}
		if i > 0 && t < m.Time[i-1] {
			return fault.Invalidf("time[%d]: %g comes before time[%d] %g: times must not go back", i, t, i-1, m.Time[i-1])
		}
	}
	if d := m.Time[n-1]; d > maxRecordedSeconds {
		return fault.Invalidf("a recorded move lasts at most %g s, this one %g s", maxRecordedSeconds, d)
	}
	m.joints = make([]Joints, n)
	prevYaw := 0.0
	for i, f := range m.Frames {
		var flat [16]float64
		if len(f.Head) != 4 {
			return fault.Invalidf("set_target_data[%d].head: a 4×4 matrix (4 rows of 4), got %d rows", i, len(f.Head))
		}
		for r, row := range f.Head {
			if len(row) != 4 {
				return fault.Invalidf("set_target_data[%d].head[%d]: a row of 4 numbers, got %d", i, r, len(row))
			}
			copy(flat[4*r:], row)
		}
		head, err := PoseFromMatrix(flat)
		if err != nil {
			return fault.Invalidf("set_target_data[%d].head: %v", i, err)
		}
		// Keep the yaw continuous from frame to frame, so that a head turning through ±180°
		// between two frames is not interpolated the long way round.
		if i > 0 {
			head.Yaw += 2 * math.Pi * math.Round((prevYaw-head.Yaw)/(2*math.Pi))
		}
		prevYaw = head.Yaw
		if len(f.Antennas) != 2 {
			return fault.Invalidf("set_target_data[%d].antennas: two angles in radians [right, left], got %d", i, len(f.Antennas))
		}
		j := Joints{Head: head, Antennas: [2]float64{f.Antennas[0], f.Antennas[1]}}
		if f.BodyYaw != nil {
			j.BodyYaw = *f.BodyYaw
		}
		for _, v := range []float64{j.Antennas[0], j.Antennas[1], j.BodyYaw} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fault.Invalidf("set_target_data[%d]: antennas and body_yaw must be finite numbers", i)
			}
		}
		m.joints[i] = j
	}
	return nil
}

// Duration is the move's length: from the start to its last timestamp.
func (m *RecordedMove) Duration() time.Duration {
	return time.Duration(math.Round(m.Time[len(m.Time)-1] * float64(time.Second)))
}

// At returns the joints the move commands t seconds after its start: the frames' values
// interpolated linearly between their timestamps, the first frame before the first timestamp and
// the last after the last. It is what PlayRecorded commands at each control tick.
func (m *RecordedMove) At(t float64) Joints {
	i, _ := slices.BinarySearchFunc(m.Time, t, func(e, t float64) int {
		if e <= t {
			return -1
		}
		return 1
	}) // the first frame after t
	switch {
	case i == 0:
		return m.joints[0]
	case i == len(m.Time):
		return m.joints[len(m.joints)-1]
	}
	t0, t1 := m.Time[i-1], m.Time[i]
	return between(m.joints[i-1], m.joints[i], (t-t0)/(t1-t0))
}

// PlayRecorded plays a recorded move from its first frame, as the public daemon plays one (no
// initial goto: the head is sent to the first frame at once), each frame at its timestamp and
// linear in between, with the move's sound as it starts. Every frame is checked first: a frame the
// robot cannot reach refuses the whole move, naming it, and nothing moves.
func (r *Robot) PlayRecorded(m *RecordedMove, kind string) (*Move, error) {
	if len(m.joints) == 0 {
		if err := m.check(); err != nil {
			return nil, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	steps := make([]Step, 0, len(m.joints)+1)
	var prev time.Duration // each step ends at its frame's rounded timestamp: no drift over the frames
	for i, j := range m.joints {
		to := r.yawRule(Target{Head: &j.Head, Antennas: &j.Antennas, BodyYaw: &j.BodyYaw}.applyTo(r.target))
		if err := r.validateMove(to, to, Linear); err != nil {
			return nil, fault.Invalidf("frame %d (at %g s) of the move: %v", i, m.Time[i], err)
		}
		if i == 0 { // at once to the first frame, held until its timestamp
			steps = append(steps, Step{To: to, Interp: Linear, Sound: m.Sound})
		}
		at := time.Duration(math.Round(m.Time[i] * float64(time.Second)))
		steps = append(steps, Step{To: to, Duration: at - prev, Interp: Linear})
		prev = at
	}
	if r.mode != MotorsEnabled {
		r.setMode(MotorsEnabled)
	}
	return r.startSequence(kind, steps, nil), nil
}

// MoveLibrary is a move library read from a dataset's files.
type MoveLibrary struct {
	Name  string            // the dataset, owner/name
	moves map[string]string // move name -> its file in files
	sound map[string]string // move name -> its sound file, if any
	files fs.FS
	dir   string // files' directory on disk, for the sounds' paths ("" when not on disk)
}

// OpenMoveLibrary lists the moves of a dataset's files: *.json at its root and in data/. dir is
// where files is on disk (os.DirFS(dir)), so that sounds can be played from there.
func OpenMoveLibrary(name string, files fs.FS, dir string) (*MoveLibrary, error) {
	lib := &MoveLibrary{Name: name, moves: map[string]string{}, sound: map[string]string{}, files: files, dir: dir}
	for _, sub := range []string{".", "data"} {
		entries, err := fs.ReadDir(files, sub)
		if err != nil {
			continue
		}
		names := map[string]bool{}
		for _, e := range entries {
			names[e.Name()] = true
		}
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() || !strings.HasSuffix(n, ".json") {
				continue
			}
			move := strings.TrimSuffix(n, ".json")
			lib.moves[move] = path.Join(sub, n)
			for _, ext := range SoundExtensions {
				if names[move+ext] {
					lib.sound[move] = path.Join(sub, move+ext)
					break
				}
			}
		}
	}
	if len(lib.moves) == 0 {
		return nil, fault.NotFoundf("dataset %s holds no recorded move (no .json file at its root or in data/)", name)
	}
	return lib, nil
}

// Moves returns the names of the library's moves, sorted.
func (l *MoveLibrary) Moves() []string {
	out := make([]string, 0, len(l.moves))
	for n := range l.moves {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// File returns the raw file of a move, as the dataset holds it.
func (l *MoveLibrary) File(move string) ([]byte, error) {
	file, ok := l.moves[move]
	if !ok {
		return nil, fault.NotFoundf("move %s not found in recorded moves library %s (it has %s)", move, l.Name, strings.Join(l.Moves(), ", "))
	}
	data, err := fs.ReadFile(l.files, file)
	if err != nil {
		return nil, fmt.Errorf("reading move %s of %s: %w", move, l.Name, err)
	}
	return data, nil
}

// SoundFile names a move's sound file within the dataset ("" for none).
func (l *MoveLibrary) SoundFile(move string) string { return l.sound[move] }

// Move reads and checks one move; its Sound is the path of its sound file on disk, if it has one.
func (l *MoveLibrary) Move(move string) (*RecordedMove, error) {
	data, err := l.File(move)
	if err != nil {
		return nil, err
	}
	m, err := ParseRecordedMove(data)
	if err != nil {
		return nil, fmt.Errorf("move %s of %s: %w", move, l.Name, err)
	}
	// Only WAV plays on the robot today (PlaySound): another container is left silent.
	if s := l.sound[move]; s != "" && l.dir != "" && strings.HasSuffix(s, ".wav") {
		m.Sound = filepath.Join(l.dir, filepath.FromSlash(s))
	}
	return m, nil
}
