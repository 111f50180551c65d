package media

import (
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"sync"
	"time"

	"github.com/robothub/robothub/adapters/hardware/usbdev"
)

// ErrReleased is what media calls answer while the daemon has handed the devices to an app
// (release_media); acquire_media takes them back.
var ErrReleased = errors.New("the robot's media are released (release_media): call acquire_media first")

// ErrOff is what a device's calls answer when the daemon runs without it (--no-media, or
// --camera/--microphone/--speaker none).
var ErrOff = errors.New("off")

// Options says which devices to open.
type Options struct {
	// Camera, Microphone and Speaker name the devices (see DeviceAuto and the others); on the
	// robot the defaults find its own by their USB ids.
	Camera, Microphone, Speaker string
	Mode                        VideoMode // DefaultVideoMode when zero
	// SimCamera draws the simulated camera's frames (Camera "sim").
	SimCamera func(now time.Time) *image.RGBA
	// Wireless: the camera is the Pi camera (libcamera), not a USB one.
	Wireless bool
	// CameraIDs and AudioIDs replace the robot's own (usbdev.CameraIDs and usbdev.AudioIDs) as
	// what the default devices are found by: a robot with another camera or sound card.
	CameraIDs, AudioIDs []usbdev.ID
	Sysfs               usbdev.Sysfs  // "/sys" when empty
	Idle                time.Duration // how long the camera keeps capturing after its last user; 5 s when 0
	Log                 *slog.Logger
}

// Media is the robot's camera, microphone and speaker. It never fails to open: a device that is
// not there is reported (Status) and its calls answer why, while the rest of the robot runs.
type Media struct {
	opts    Options
	log     *slog.Logger
	cam     *camera
	mic     *microphone
	spk     *speaker
	mix     *mixer
	camErr  error // why there is no camera: discovery, or off
	micErr  error
	spkErr  error
	camName string

	mu       sync.Mutex
	released bool
	micGain  int
	volume   int
}

// Open finds the devices opts names and starts the audio; the camera starts on its first user.
func Open(opts Options) *Media {
	if opts.Mode == (VideoMode{}) {
		opts.Mode = DefaultVideoMode
	}
	if opts.Sysfs == "" {
		opts.Sysfs = "/sys"
	}
	if opts.Idle == 0 {
		opts.Idle = 5 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	m := &Media{opts: opts, log: opts.Log, mix: &mixer{volume: 1}, volume: 100, micGain: 100}

	camDev, err := m.resolveCamera()
	if err != nil {
		m.camErr = err
		m.log.Warn("no camera: the robot runs without one", "err", err)
	} else {
		m.cam = newCamera(camDev, opts.Mode, opts.SimCamera, opts.Idle, m.log.With("device", "camera"))
		m.camName = camDev
	}
	micDev, spkDev, err := m.resolveAudio()
	if micDev == "" {
		m.micErr = err
	}
	if spkDev == "" {
		m.spkErr = err
	}
	if err != nil {
		m.log.Warn("no sound card: the robot runs without", "err", err)
	}
	if micDev != "" {
		m.mic = newMicrophone(micDev, m.log.With("device", "microphone"))
		m.mic.start()
	}
	if spkDev != "" {
		m.spk = &speaker{device: spkDev, mix: m.mix, log: m.log.With("device", "speaker")}
		if micDev == DeviceLoopback {
			m.spk.tap = m.mic.heard
		}
		m.spk.start()
	}
	return m
}

func (m *Media) resolveCamera() (string, error) {
	switch d := m.opts.Camera; d {
	case DeviceNone:
		return "", fmt.Errorf("camera %w (--camera none or --no-media)", ErrOff)
	case DeviceSim:
		if m.opts.SimCamera == nil {
			return "", errors.New("camera sim: only the simulated robot has it")
		}
		return d, nil
	case DeviceAuto:
		if m.opts.Wireless {
			return "libcamera", nil
		}
		dev, _, err := m.opts.Sysfs.FindCamera(idsOr(m.opts.CameraIDs, usbdev.CameraIDs))
		return dev, err
	default:
		_, err := cameraPipeline(d, m.opts.Mode)
		return d, err
	}
}

// idsOr is ids, or the robot's own when none are given.
func idsOr(ids, own []usbdev.ID) []usbdev.ID {
	if len(ids) > 0 {
		return ids
	}
	return own
}

func (m *Media) resolveAudio() (mic, spk string, err error) {
	mic, spk = m.opts.Microphone, m.opts.Speaker
	if mic == DeviceAuto || spk == DeviceAuto {
		card, _, ferr := m.opts.Sysfs.FindSoundCard(idsOr(m.opts.AudioIDs, usbdev.AudioIDs))
		if ferr != nil {
			err = ferr
		} else {
			// plughw converts the card's own format and rate; the pipelines convert the rest.
			dev := "plughw:CARD=" + card + ",DEV=0"
			if mic == DeviceAuto {
				mic = dev
			}
			if spk == DeviceAuto {
				spk = dev
			}
		}
		if mic == DeviceAuto {
			mic = ""
		}
		if spk == DeviceAuto {
			spk = ""
		}
	}
	if mic == DeviceNone {
		mic, err = "", fmt.Errorf("microphone %w (--microphone none or --no-media)", ErrOff)
	} else if mic != "" && mic != DeviceLoopback {
		if _, perr := microphonePipeline(mic); perr != nil {
			mic, err = "", perr
		}
	}
	if spk == DeviceNone {
		spk, err = "", errors.Join(err, fmt.Errorf("speaker %w (--speaker none or --no-media)", ErrOff))
	} else if spk != "" && spk != DeviceLoopback {
		if _, perr := speakerPipeline(spk); perr != nil {
			spk, err = "", errors.Join(err, perr)
		}
	}
	return mic, spk, err
}

// Close stops every pipeline.
func (m *Media) Close() {
	if m.cam != nil {
		m.cam.setEnabled(false)
	}
	if m.mic != nil {
		m.mic.stop()
	}
	if m.spk != nil {
		m.spk.stop()
	}
}

// Release closes the devices so that an app can open them itself (OpenCV, sounddevice), as the
// public daemon's release_media does. Idempotent.
func (m *Media) Release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.released {
		return
	}
	m.released = true
	if m.cam != nil {
		m.cam.setEnabled(false)
	}
	if m.mic != nil {
		m.mic.stop()
	}
	if m.spk != nil {
		m.spk.stop()
	}
	m.mix.clear()
	m.log.Info("media released: the camera and sound card are free for apps")
}

// Acquire opens the devices again after Release. Idempotent.
func (m *Media) Acquire() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.released {
		return
	}
	m.released = false
	if m.cam != nil {
		m.cam.setEnabled(true)
	}
	if m.mic != nil {
		m.mic.start()
	}
	if m.spk != nil {
		m.spk.start()
	}
	m.log.Info("media acquired")
}

// Status is what /api/media/status and the daemon's status report.
type Status struct {
	Available                   bool // some device works and media are not released
	Released                    bool
	NoMedia                     bool // every device is off
	Camera, Microphone, Speaker DeviceStatus
}

// DeviceStatus is one device's: its name, and why it does not work, if it does not.
type DeviceStatus struct {
	Device string `json:"device"`
	Error  string `json:"error,omitempty"`
}

// Status reports the devices.
func (m *Media) Status() Status {
	m.mu.Lock()
	released := m.released
	m.mu.Unlock()
	st := Status{Released: released}
	dev := func(name string, setupErr error, running func() error) DeviceStatus {
		if setupErr != nil {
			return DeviceStatus{Error: setupErr.Error()}
		}
		ds := DeviceStatus{Device: name}
		if err := running(); err != nil {
			ds.Error = err.Error()
		}
		return ds
	}
	st.Camera = dev(m.camName, m.camErr, func() error { return m.cam.err() })
	st.Microphone = dev(m.micDevice(), m.micErr, func() error { return m.mic.err() })
	st.Speaker = dev(m.spkDevice(), m.spkErr, func() error { return m.spk.err() })
	st.NoMedia = m.cam == nil && m.mic == nil && m.spk == nil
	st.Available = !released && !st.NoMedia
	return st
}

func (m *Media) micDevice() string {
	if m.mic == nil {
		return ""
	}
	return m.mic.device
}

func (m *Media) spkDevice() string {
	if m.spk == nil {
		return ""
	}
	return m.spk.device
}

// usable says why a device's call cannot be served, or nil.
func (m *Media) usable(present bool, setupErr error) error {
	if !present {
		return setupErr
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.released {
		return ErrReleased
	}
	return nil
}

// --- camera ---

// Mode is the size and rate frames are captured at.
func (m *Media) Mode() VideoMode { return m.opts.Mode }

// HasCamera reports whether a camera is configured (it may still fail to capture).
func (m *Media) HasCamera() bool { return m.cam != nil }

// Frames subscribes to the camera: frames come on the channel as they are captured (a slow
// reader gets the newest, never a backlog) until stop is called.
func (m *Media) Frames() (frames <-chan Frame, stop func(), err error) {
	if err := m.usable(m.cam != nil, m.camErr); err != nil {
		return nil, nil, err
	}
	done, err := m.cam.use()
	if err != nil {
		return nil, nil, err
	}
	ch, unsubscribe := m.cam.feed.subscribe()
	return ch, func() { unsubscribe(); done() }, nil
}

// Frame returns the newest frame, starting the camera and waiting for its first frame if needed.
func (m *Media) Frame(ctx context.Context) (Frame, error) {
	if err := m.usable(m.cam != nil, m.camErr); err != nil {
		return Frame{}, err
	}
	done, err := m.cam.use()
	if err != nil {
		return Frame{}, err
	}
	defer done()
	if f, ok := m.cam.feed.last(); ok {
		return f, nil
	}
	ch, unsubscribe := m.cam.feed.subscribe()
	defer unsubscribe()
	if f, ok := m.cam.feed.last(); ok {
		return f, nil
	}
	select {
	case f := <-ch:
		return f, nil
	case <-ctx.Done():
		if err := m.cam.err(); err != nil {
			return Frame{}, err
		}
		return Frame{}, fmt.Errorf("camera %s: no frame yet: %w", m.camName, ctx.Err())
	}
}

// --- microphone ---

// Chunks subscribes to the microphone.
func (m *Media) Chunks() (<-chan Chunk, func(), error) {
	if err := m.usable(m.mic != nil, m.micErr); err != nil {
		return nil, nil, err
	}
	ch, stop := m.mic.feed.subscribe()
	return ch, stop, nil
}

// Listen appends the samples heard since the previous call to dst (the robot's recorder).
func (m *Media) Listen(dst []float32) []float32 {
	if m.mic == nil {
		return dst
	}
	return m.mic.drain(dst)
}

// Level is the microphone's loudness now, the RMS of its last 10 ms in [0, 1].
func (m *Media) Level() (float64, error) {
	if err := m.usable(m.mic != nil, m.micErr); err != nil {
		return 0, err
	}
	m.mic.mu.Lock()
	defer m.mic.mu.Unlock()
	return m.mic.level, nil
}

// --- speaker ---

// Play queues interleaved stereo samples on the speaker.
func (m *Media) Play(samples []float32) error {
	if err := m.usable(m.spk != nil, m.spkErr); err != nil {
		return err
	}
	m.mix.play(samples)
	return nil
}

// StopPlaying drops what the speaker has queued.
func (m *Media) StopPlaying() { m.mix.clear() }

// Queued is how many seconds of sound wait for the speaker.
func (m *Media) Queued() float64 { return m.mix.queued() }

// --- volumes ---

// Volume is the speaker's volume, 0 to 100 (a gain the daemon applies: it works on every sound
// card, and on none).
func (m *Media) Volume() (int, error) {
	if err := m.usable(m.spk != nil, m.spkErr); err != nil && !errors.Is(err, ErrReleased) {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.volume, nil
}

// SetVolume sets the speaker's volume, 0 to 100.
func (m *Media) SetVolume(v int) error {
	if err := m.usable(m.spk != nil, m.spkErr); err != nil && !errors.Is(err, ErrReleased) {
		return err
	}
	if v < 0 || v > 100 {
		return fmt.Errorf("volume %d is not between 0 and 100", v)
	}
	m.mu.Lock()
	m.volume = v
	m.mu.Unlock()
	m.mix.mu.Lock()
	m.mix.volume = float64(v) / 100
	m.mix.mu.Unlock()
	return nil
}

// MicrophoneVolume is the microphone's gain, 0 to 100 (100: as the card gives it).
func (m *Media) MicrophoneVolume() (int, error) {
	if err := m.usable(m.mic != nil, m.micErr); err != nil && !errors.Is(err, ErrReleased) {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.micGain, nil
}

// SetMicrophoneVolume sets the microphone's gain, 0 to 100.
func (m *Media) SetMicrophoneVolume(v int) error {
	if err := m.usable(m.mic != nil, m.micErr); err != nil && !errors.Is(err, ErrReleased) {
		return err
	}
	if v < 0 || v > 100 {
		return fmt.Errorf("volume %d is not between 0 and 100", v)
	}
	m.mu.Lock()
	m.micGain = v
	m.mu.Unlock()
	m.mic.mu.Lock()
	m.mic.gain = float64(v) / 100
	m.mic.mu.Unlock()
	return nil
}

// CameraDevice and AudioDevice name the devices, for the volume routes.
func (m *Media) CameraDevice() string { return m.camName }

// SpeakerDevice names the speaker's device.
func (m *Media) SpeakerDevice() string { return m.spkDevice() }

// MicrophoneDevice names the microphone's device.
func (m *Media) MicrophoneDevice() string { return m.micDevice() }
