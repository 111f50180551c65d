package robot

import (
	"math"
	"time"
)

// Speech wobble: while wobbling is on, the head moves with the loudness of what the speaker plays,
// on top of the targets, as a person's head moves while talking. The loudness is measured per
// wobbleWindow of the samples handed to the speaker, and played back on the speaker's clock.
const (
	wobbleWindow   = 20 * time.Millisecond
	wobblePitchMax = 0.12  // rad at full loudness
	wobbleRollMax  = 0.06  // rad
	wobbleZMax     = 0.004 // m
)

// wobble is the loudness schedule of the speaker: levels[i] covers [start+i·window, +window).
type wobble struct {
	on     bool
	start  time.Time
	levels []float64
}

// SetWobbling turns the speech wobble on or off; off, the head goes back to its targets at the next
// control tick.
func (r *Robot) SetWobbling(on bool) {
	r.mu.Lock()
	r.wob.on = on
	r.mu.Unlock()
}

// Wobbling reports whether the speech wobble is on.
func (r *Robot) Wobbling() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.wob.on
}

// scheduleWobble appends the loudness of samples, which the speaker plays from now (or after what
// it has queued). Call with r.mu held.
func (r *Robot) scheduleWobble(samples []float32, now time.Time) {
	w := &r.wob
	if end := w.start.Add(time.Duration(len(w.levels)) * wobbleWindow); end.Before(now) {
		w.start, w.levels = now, w.levels[:0]
	}
	per := int(wobbleWindow.Seconds()*SampleRate) * Channels // interleaved stereo
	for i := 0; i < len(samples); i += per {
		sum := 0.0
		chunk := samples[i:min(i+per, len(samples))]
		for _, v := range chunk {
			sum += float64(v) * float64(v)
		}
		w.levels = append(w.levels, math.Min(1, 3*math.Sqrt(sum/float64(len(chunk)))))
	}
}

// wobbled returns the target with the wobble at now added. Call with r.mu held.
func (r *Robot) wobbled(j Joints, now time.Time) Joints {
	w := &r.wob
	if !w.on || len(w.levels) == 0 {
		return j
	}
	i := int(now.Sub(w.start) / wobbleWindow)
	if i < 0 || i >= len(w.levels) {
		return j
	}
	level := w.levels[i]
	t := now.Sub(w.start).Seconds()
	j.Head.Pitch += wobblePitchMax * level * math.Sin(2*math.Pi*3.1*t)
	j.Head.Roll += wobbleRollMax * level * math.Sin(2*math.Pi*1.7*t+1)
	j.Head.Z += wobbleZMax * level * math.Sin(2*math.Pi*2.3*t+2)
	return j
}
