package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sync"
	"time"
	"unsafe"

	"github.com/robothub/robothub/core/hub"
)

// The audio format of every path: the public SDK's, 16 kHz stereo float32 in [-1, 1].
const (
	SampleRate  = 16000
	Channels    = 2
	chunkFrames = SampleRate / 100 // 10 ms
	chunkBytes  = chunkFrames * Channels * 4
	// maxQueued bounds what the speaker has waiting: a minute.
	maxQueued = 60 * SampleRate * Channels
	// listenKept bounds what the robot's recorder has not collected yet: a second.
	listenKept = SampleRate * Channels
)

// mixer holds what the speaker has to play and hands it out in chunks, silence when nothing waits.
type mixer struct {
	mu     sync.Mutex
	queue  []float32
	volume float64 // 0..1, applied on the way out
}

func (m *mixer) play(samples []float32) {
	m.mu.Lock()
	m.queue = append(m.queue, samples...)
	if over := len(m.queue) - maxQueued; over > 0 {
		m.queue = m.queue[over:]
	}
	m.mu.Unlock()
}

func (m *mixer) clear() {
	m.mu.Lock()
	m.queue = nil
	m.mu.Unlock()
}

// queued is how much waits, in seconds.
func (m *mixer) queued() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return float64(len(m.queue)) / (SampleRate * Channels)
}

// pull fills dst with the next samples, scaled by the volume.
func (m *mixer) pull(dst []float32) {
	m.mu.Lock()
	n := copy(dst, m.queue)
	m.queue = m.queue[n:]
	if len(m.queue) == 0 {
		m.queue = nil
	}
	v := float32(m.volume)
	m.mu.Unlock()
	for i := range dst[:n] {
		dst[i] *= v
	}
	clear(dst[n:])
}

// microphone captures audio all the time it is enabled: the robot's recorder collects it every
// control tick, apps and WebRTC peers subscribe to its chunks.
type microphone struct {
	device string
	log    *slog.Logger
	feed   *feed[Chunk]

	mu       sync.Mutex
	kept     []float32 // for Listen
	gain     float64
	level    float64 // RMS of the latest chunk, in [0, 1]
	lastErr  error
	cancel   context.CancelFunc
	finished chan struct{}
}

func newMicrophone(device string, log *slog.Logger) *microphone {
	// Audio subscribers get a second of chunks before the oldest are dropped.
	return &microphone{device: device, log: log, feed: newFeed[Chunk](100, false), gain: 1}
}

func (m *microphone) start() {
	if m.cancel != nil || m.device == DeviceLoopback {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel, m.finished = cancel, make(chan struct{})
	go m.run(ctx, m.finished)
}

func (m *microphone) stop() {
	if m.cancel == nil {
		return
	}
	m.cancel()
	<-m.finished
	m.cancel, m.finished = nil, nil
}

// heard takes a captured chunk: gain, level, the recorder's buffer, the subscribers.
func (m *microphone) heard(samples []float32, at time.Time) {
	m.mu.Lock()
	g := float32(m.gain)
	var sum float64
	for i, s := range samples {
		s = max(-1, min(1, s*g))
		samples[i] = s
		sum += float64(s) * float64(s)
	}
	if len(samples) > 0 {
		m.level = math.Sqrt(sum / float64(len(samples)))
	}
	m.kept = append(m.kept, samples...)
	if over := len(m.kept) - listenKept; over > 0 {
		m.kept = append(m.kept[:0], m.kept[over:]...)
	}
	m.mu.Unlock()
	m.feed.publish(Chunk{Samples: samples, Captured: at})
}

// drain appends what was heard since the last call to dst.
func (m *microphone) drain(dst []float32) []float32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	dst = append(dst, m.kept...)
	m.kept = m.kept[:0]
	return dst
}

func (m *microphone) setErr(err error) {
	m.mu.Lock()
	m.lastErr = err
	m.mu.Unlock()
}

func (m *microphone) err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lastErr
}

func (m *microphone) run(ctx context.Context, finished chan struct{}) {
	defer close(finished)
	retry(ctx, m.log, "microphone "+m.device, m.setErr, m.capture)
}

func (m *microphone) capture(ctx context.Context) error {
	desc, err := microphonePipeline(m.device)
	if err != nil {
		return err
	}
	p, err := startGst(desc, false, m.log)
	if err != nil {
		return err
	}
	defer p.stopWith(ctx)()
	buf := make([]byte, chunkBytes)
	first := true
	for {
		if _, err := io.ReadFull(p.data, buf); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("microphone %s: %w", m.device, p.failure())
			}
			return fmt.Errorf("microphone %s: %w", m.device, err)
		}
		if first {
			first = false
			m.setErr(nil)
			m.log.Info("microphone capturing", "microphone", m.device)
		}
		m.heard(floats(buf), time.Now())
	}
}

// floats copies little-endian float32 bytes into samples (every platform Go builds the daemon
// for is little-endian).
func floats(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(out))), len(out)*4), b)
	return out
}

// floatBytes views samples as their little-endian bytes.
func floatBytes(s []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*4)
}

// speaker plays what the mixer gives it, on a device or, as loopback, into the microphone.
type speaker struct {
	device string
	mix    *mixer
	log    *slog.Logger
	// tap receives every chunk as it is written: the loopback microphone.
	tap func([]float32, time.Time)

	mu       sync.Mutex
	lastErr  error
	cancel   context.CancelFunc
	finished chan struct{}
}

func (s *speaker) start() {
	if s.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.finished = cancel, make(chan struct{})
	go func() {
		defer close(s.finished)
		if s.device == DeviceLoopback {
			s.runLoopback(ctx)
			return
		}
		retry(ctx, s.log, "speaker "+s.device, s.setErr, s.play)
	}()
}

func (s *speaker) stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	<-s.finished
	s.cancel, s.finished = nil, nil
}

func (s *speaker) setErr(err error) {
	s.mu.Lock()
	s.lastErr = err
	s.mu.Unlock()
}

func (s *speaker) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

// play feeds one pipeline until it fails or ctx ends. The pipe's writes block while the device
// is busy, so the device's own clock paces the mixer; silence keeps it running between sounds.
func (s *speaker) play(ctx context.Context) error {
	desc, err := speakerPipeline(s.device)
	if err != nil {
		return err
	}
	p, err := startGst(desc, true, s.log)
	if err != nil {
		return err
	}
	defer p.stopWith(ctx)()
	chunk := make([]float32, chunkFrames*Channels)
	first := true
	for {
		s.mix.pull(chunk)
		if _, err := p.data.Write(floatBytes(chunk)); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("speaker %s: %w", s.device, p.failure())
		}
		if first {
			first = false
			s.setErr(nil)
			s.log.Info("speaker playing", "speaker", s.device)
		}
		if s.tap != nil {
			s.tap(append([]float32(nil), chunk...), time.Now())
		}
	}
}

// runLoopback plays in real time into the tap, as the simulated robot's speaker does.
func (s *speaker) runLoopback(ctx context.Context) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	next := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			// Catch up on ticks the scheduler delayed, but never invent more than a second.
			if now.Sub(next) > time.Second {
				next = now
			}
			for ; !next.After(now); next = next.Add(10 * time.Millisecond) {
				chunk := make([]float32, chunkFrames*Channels)
				s.mix.pull(chunk)
				if s.tap != nil {
					s.tap(chunk, now)
				}
			}
		}
	}
}

// retry runs f until ctx ends, pausing longer after each failure (the project's backoff, from
// 200 ms up to 5 s) and reporting it.
func retry(ctx context.Context, log *slog.Logger, what string, report func(error), f func(context.Context) error) {
	pauses := hub.NewBackOff(200*time.Millisecond, 5*time.Second)
	for ctx.Err() == nil {
		started := time.Now()
		err := f(ctx)
		if ctx.Err() != nil {
			return
		}
		report(err)
		if time.Since(started) > 10*time.Second {
			pauses.Reset() // it ran a while: a new failure, not the same one again
		}
		pause := pauses.NextBackOff()
		log.Warn(what+" stopped; restarting", "err", err, "in", pause)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
	}
}
