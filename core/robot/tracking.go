package robot

import (
	"image"
	"math"
	"time"

	"github.com/robothub/robothub/core/fault"
)

// Face is a face a Detector found in a frame: its centre from -1 to 1 of the image's half width and
// half height from the centre (X to the right, Y down), its roll in radians, and the detector's
// confidence.
type Face struct {
	X, Y, Roll, Score float64
	Width             float64 // the box's width, as a fraction of the image's
}

// Detector finds faces in a camera frame. The daemon's is YuNet on ONNX Runtime; tests use their own.
type Detector interface {
	Detect(frame *image.RGBA) ([]Face, error)
}

// FaceTarget is the latest face head tracking saw, in the public daemon's shape.
type FaceTarget struct {
	Detected bool     `json:"detected"`
	X        *float64 `json:"x"`
	Y        *float64 `json:"y"`
	Roll     *float64 `json:"roll"`
	TS       *float64 `json:"ts"`
}

// Head tracking turns the head toward the largest face: at each frame the head's yaw and pitch move
// a fraction trackGain of the angle between the head's axis and the face (the camera's field of
// view), and the result is blended with the app's target by the weight.
const (
	trackPeriod = 100 * time.Millisecond
	trackGain   = 0.5
	trackLost   = time.Second // no face for this long: the offset eases back to the app's target
)

type tracking struct {
	on       bool
	weight   float64
	detector Detector
	missing  string // why there is no detector, for the error
	yaw      float64
	pitch    float64
	face     FaceTarget
	seen     time.Time
	stop     chan struct{}
	release  bool // tracking stopped or paused: the next tick sends the app's target once
}

func (t *tracking) active() bool { return t.on && t.weight > 0 }

// SetDetector gives the robot its face detector, or the reason it has none (what is missing and
// where it was looked for), which StartTracking reports.
func (r *Robot) SetDetector(d Detector, missing string) {
	r.mu.Lock()
	r.track.detector, r.track.missing = d, missing
	r.mu.Unlock()
}

// StartTracking turns head tracking on with weight in [0, 1] (0 pauses it), or changes its weight.
func (r *Robot) StartTracking(weight float64) error {
	if math.IsNaN(weight) || weight < 0 || weight > 1 {
		return fault.Invalidf("weight must be within [0, 1]")
	}
	cam, ok := r.camera()
	if !ok {
		return fault.Unavailablef("head tracking needs a camera: the %s backend has none", r.backend.Name())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.track.detector == nil {
		msg := r.track.missing
		if msg == "" {
			msg = "no face detector is configured"
		}
		return fault.Unavailablef("head tracking is not available: %s", msg)
	}
	r.track.weight = weight
	if r.track.on {
		r.track.release = weight == 0
		return nil
	}
	r.track.on = true
	r.track.stop = make(chan struct{})
	go r.trackLoop(cam, r.track.detector, r.track.stop)
	return nil
}

// StopTracking turns head tracking off; the head goes back to the app's target.
func (r *Robot) StopTracking() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.track.on {
		close(r.track.stop)
		r.track.release = true
	}
	r.track.on, r.track.yaw, r.track.pitch = false, 0, 0
}

// TrackedFace returns the latest face head tracking saw.
func (r *Robot) TrackedFace() FaceTarget {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.track.face
}

func (r *Robot) trackLoop(cam Camera, det Detector, stop <-chan struct{}) {
	every(trackPeriod, stop, func(now time.Time) {
		r.mu.Lock()
		paused := r.track.weight == 0
		r.mu.Unlock()
		if paused {
			return
		}
		var faces []Face
		if frame := cam.Frame(now); frame != nil {
			var err error
			if faces, err = det.Detect(frame); err != nil {
				r.log.Warn("face detection failed", "err", err)
			}
		}
		specs := cam.CameraSpecs()
		r.mu.Lock()
		defer r.mu.Unlock()
		r.trackStep(faces, specs, now)
	})
}

// trackStep moves the tracking offset toward the largest face of a frame. Call with r.mu held.
func (r *Robot) trackStep(faces []Face, specs CameraSpecs, now time.Time) {
	t := &r.track
	if len(faces) == 0 {
		t.face.Detected = false
		if now.Sub(t.seen) > trackLost {
			t.yaw *= 0.8
			t.pitch *= 0.8
		}
		return
	}
	best := faces[0]
	for _, f := range faces[1:] {
		if f.Width > best.Width {
			best = f
		}
	}
	ts := float64(now.UnixNano()) / 1e9
	x, y, roll := best.X, best.Y, best.Roll
	t.face = FaceTarget{Detected: true, X: &x, Y: &y, Roll: &roll, TS: &ts}
	t.seen = now
	// The angle from the camera's axis to the face, from its pixel and the focal length.
	k := specs.K
	if k[0] == 0 || k[4] == 0 {
		return
	}
	u := float64(specs.Width) / 2 * x
	v := float64(specs.Height) / 2 * y
	t.yaw += trackGain * -math.Atan2(u, k[0])
	t.pitch += trackGain * math.Atan2(v, k[4])
	t.yaw = limitHeadYaw.clamp(t.yaw)
	t.pitch = limitHeadTilt.clamp(t.pitch)
}

// tracked returns the target with head tracking's offset blended in by its weight. Call with r.mu
// held.
func (r *Robot) tracked(j Joints) Joints {
	t := &r.track
	if !t.active() {
		return j
	}
	j.Head.Yaw += t.weight * (t.yaw - 0)
	j.Head.Pitch += t.weight * (t.pitch - 0)
	return j
}
