package robot

import (
	"math"
	"path/filepath"

	"github.com/robothub/robothub/core/fault"
)

// builtinSounds are the sounds apps play by name, as the anchor's apps do with
// play_sound("wake_up.wav"): short chimes made here rather than files shipped with the daemon.
var builtinSounds = map[string][]float64{
	"wake_up.wav":    {523.25, 659.25, 783.99}, // rising C major arpeggio
	"go_sleep.wav":   {783.99, 659.25, 523.25}, // falling
	"confused1.wav":  {440, 415.3, 440, 392},
	"impatient1.wav": {660, 660, 660},
	"dance1.wav":     {392, 523.25, 659.25, 523.25},
}

// builtinSound returns the samples of a built-in sound named name (a bare file name).
func builtinSound(name string) ([]float32, bool) {
	notes, ok := builtinSounds[name]
	if !ok || filepath.Base(name) != name {
		return nil, false
	}
	const noteSeconds = 0.15
	n := int(noteSeconds * SampleRate)
	out := make([]float32, 0, n*len(notes)*Channels)
	for _, f := range notes {
		for i := 0; i < n; i++ {
			t := float64(i) / SampleRate
			env := math.Min(1, math.Min(float64(i), float64(n-i))/(0.01*SampleRate))
			v := float32(0.4 * env * math.Sin(2*math.Pi*f*t))
			out = append(out, v, v)
		}
	}
	return out, true
}

// Silencer is implemented by backends that can drop what the speaker has queued.
type Silencer interface {
	StopSpeaking()
}

// StopSpeaking implements Silencer.
func (s *Sim) StopSpeaking() {
	s.mu.Lock()
	s.speaker = s.speaker[:0]
	s.mu.Unlock()
}

// StopSound stops what the speaker plays and drops what is queued.
func (r *Robot) StopSound() error {
	var sl Silencer = r.media
	ok := r.media != nil
	if !ok {
		sl, ok = r.backend.(Silencer)
	}
	if !ok {
		return fault.Refusedf("the %s backend cannot stop its speaker", r.backend.Name())
	}
	r.mu.Lock()
	sl.StopSpeaking()
	r.mu.Unlock()
	return nil
}
