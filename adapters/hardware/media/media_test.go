package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/wait"

	"github.com/robothub/robothub/adapters/hardware/usbdev"
	"github.com/robothub/robothub/core/robot"
)

func needGst(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath(GstLaunch); err != nil {
		t.Skip("GStreamer is not installed (.ci/run installs it)")
	}
}

func openTest(t *testing.T, opts Options) *Media {
	t.Helper()
	if opts.Sysfs == "" {
		opts.Sysfs = usbdev.Sysfs(t.TempDir()) // an empty machine: nothing is found unless named
	}
	m := Open(opts)
	t.Cleanup(m.Close)
	return m
}

func TestTestCameraGivesMovingBGRFrames(t *testing.T) {
	needGst(t)
	m := openTest(t, Options{Camera: DeviceTest, Microphone: DeviceNone, Speaker: DeviceNone, Mode: VideoMode{320, 240, 30}})
	frames, stop, err := m.Frames()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	var got []Frame
	deadline := time.After(10 * time.Second)
	for len(got) < 10 {
		select {
		case f := <-frames:
			got = append(got, f)
		case <-deadline:
			t.Fatalf("got %d frames in 10 s; camera status %+v", len(got), m.Status().Camera)
		}
	}
	first, last := got[0], got[len(got)-1]
	if first.Width != 320 || first.Height != 240 || len(first.BGR) != 320*240*3 {
		t.Fatalf("frame is %dx%d with %d bytes, want 320x240 BGR", first.Width, first.Height, len(first.BGR))
	}
	if last.Seq <= first.Seq || !last.Captured.After(first.Captured) {
		t.Fatalf("frames do not advance: seq %d -> %d", first.Seq, last.Seq)
	}
	if bytes.Equal(first.BGR, last.BGR) {
		t.Fatal("the test source's ball does not move: the first and tenth frames are the same")
	}
	// About 30 fps: ten frames take about a third of a second, never less than a quarter.
	if span := last.Captured.Sub(first.Captured); span < 250*time.Millisecond {
		t.Fatalf("%d frames in %s: faster than 30 fps", len(got)-1, span)
	}
}

func TestCameraStopsWhenIdleAndRestartsOnUse(t *testing.T) {
	needGst(t)
	m := openTest(t, Options{Camera: DeviceTest, Microphone: DeviceNone, Speaker: DeviceNone, Mode: VideoMode{64, 48, 30}, Idle: 50 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f1, err := m.Frame(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wait.For(t, 10*time.Second, "the idle camera to stop", func() bool {
		m.cam.mu.Lock()
		defer m.cam.mu.Unlock()
		return m.cam.cancel == nil
	})
	f2, err := m.Frame(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f2.Seq != 1 && !f2.Captured.After(f1.Captured) {
		t.Fatalf("after a restart the frame is the old one (seq %d)", f2.Seq)
	}
}

func TestReleaseFreesTheDevicesAndAcquireTakesThemBack(t *testing.T) {
	needGst(t)
	m := openTest(t, Options{Camera: DeviceTest, Microphone: DeviceTest, Speaker: DeviceTest, Mode: VideoMode{64, 48, 30}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := m.Frame(ctx); err != nil {
		t.Fatal(err)
	}
	m.Release()
	m.Release() // idempotent
	if _, err := m.Frame(ctx); !errors.Is(err, ErrReleased) {
		t.Fatalf("a frame while released: %v, want ErrReleased", err)
	}
	if err := m.Play(make([]float32, 100)); !errors.Is(err, ErrReleased) {
		t.Fatalf("playing while released: %v, want ErrReleased", err)
	}
	if st := m.Status(); st.Available || !st.Released {
		t.Fatalf("status while released: %+v", st)
	}
	if n := gstChildren(t); n != 0 {
		t.Fatalf("%d gst-launch processes still run after release: the devices are not free", n)
	}
	m.Acquire()
	if _, err := m.Frame(ctx); err != nil {
		t.Fatalf("a frame after acquire: %v", err)
	}
	if st := m.Status(); !st.Available || st.Released {
		t.Fatalf("status after acquire: %+v", st)
	}
}

// gstChildren counts this process's gst-launch children.
func gstChildren(t *testing.T) int {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	n := 0
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var pid, ppid int
		var comm, state string
		if _, err := fmt.Sscan(string(b), &pid, &comm, &state, &ppid); err == nil && ppid == os.Getpid() && comm == "(gst-launch-1.0)" {
			n++
		}
	}
	return n
}

func TestMicrophoneTestSourceIsHeardInStereoAt16kHz(t *testing.T) {
	needGst(t)
	m := openTest(t, Options{Camera: DeviceNone, Microphone: DeviceTest, Speaker: DeviceNone})
	chunks, stop, err := m.Chunks()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	var n int
	var first, last time.Time
	var energy float64
	for n < SampleRate*Channels { // one second
		select {
		case c := <-chunks:
			if first.IsZero() {
				first = c.Captured
			}
			last = c.Captured
			n += len(c.Samples)
			for _, s := range c.Samples {
				energy += float64(s) * float64(s)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%d samples in 10 s; microphone status %+v", n, m.Status().Microphone)
		}
	}
	if rms := math.Sqrt(energy / float64(n)); rms < 0.01 {
		t.Fatalf("the test source is silent: RMS %.4f", rms)
	}
	// A second of stereo at 16 kHz arrives in about a second of real time.
	if span := last.Sub(first); span < 700*time.Millisecond {
		t.Fatalf("a second of audio arrived in %s: the rate is not 16 kHz stereo", span)
	}
	if lvl, _ := m.Level(); lvl <= 0 {
		t.Fatalf("level %.3f with a loud source", lvl)
	}
}

func TestSpeakerWritesWhatIsPlayedToAWAVFileInRealTime(t *testing.T) {
	needGst(t)
	out := filepath.Join(t.TempDir(), "speaker.wav")
	m := openTest(t, Options{Camera: DeviceNone, Microphone: DeviceNone, Speaker: "file:" + out})
	tone := make([]float32, SampleRate/2*Channels) // half a second of 440 Hz
	for i := range tone {
		tone[i] = float32(0.5 * math.Sin(2*math.Pi*440*float64(i/Channels)/SampleRate))
	}
	if err := m.Play(tone); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 10*time.Second, "the tone to be played", func() bool { return m.Queued() == 0 })
	started := time.Now()
	m.Close() // EOS: wavenc writes its header's sizes
	if time.Since(started) > 3*time.Second {
		t.Fatal("closing the speaker took more than 3 s")
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	loud := loudSamples(t, data)
	if loud < SampleRate/4 {
		t.Fatalf("the WAV holds %d loud samples; the half-second tone should be in it", loud)
	}
}

func TestLoopbackMicrophoneHearsTheLoopbackSpeaker(t *testing.T) {
	m := openTest(t, Options{Camera: DeviceNone, Microphone: DeviceLoopback, Speaker: DeviceLoopback})
	chunks, stop, err := m.Chunks()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	click := make([]float32, 160*Channels)
	for i := range click {
		click[i] = 0.8
	}
	sent := time.Now()
	if err := m.Play(click); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case c := <-chunks:
			if len(c.Samples) > 0 && c.Samples[0] > 0.5 {
				if d := c.Captured.Sub(sent); d > 200*time.Millisecond {
					t.Fatalf("the click was heard %s after it was played", d)
				}
				return
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the loopback microphone never heard the click")
		}
	}
}

func TestVolumeScalesWhatIsPlayed(t *testing.T) {
	m := openTest(t, Options{Camera: DeviceNone, Microphone: DeviceLoopback, Speaker: DeviceLoopback})
	if err := m.SetVolume(101); err == nil {
		t.Fatal("volume 101 was accepted")
	}
	if err := m.SetVolume(25); err != nil {
		t.Fatal(err)
	}
	chunks, stop, _ := m.Chunks()
	defer stop()
	one := make([]float32, 160*Channels)
	for i := range one {
		one[i] = 0.8
	}
	_ = m.Play(one)
	for {
		select {
		case c := <-chunks:
			if c.Samples[0] != 0 {
				if math.Abs(float64(c.Samples[0])-0.2) > 1e-6 {
					t.Fatalf("at volume 25 a sample of 0.8 is played as %.3f, want 0.2", c.Samples[0])
				}
				return
			}
		case <-time.After(5 * time.Second):
			t.Fatal("nothing was played")
		}
	}
}

func TestMissingDevicesAreNamedAndTheRestWorks(t *testing.T) {
	m := openTest(t, Options{Microphone: DeviceLoopback, Speaker: DeviceLoopback}) // camera: auto, on an empty sysfs
	_, _, err := m.Frames()
	var nf *usbdev.NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("Frames on a robot without its camera: %v, want a NotFoundError", err)
	}
	for _, want := range []string{"38fb:1002", "0c45:636d", "--camera"} {
		if !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Errorf("the error %q does not name %s", err, want)
		}
	}
	if err := m.Play(make([]float32, 2)); err != nil {
		t.Fatalf("the speaker should work without a camera: %v", err)
	}
	st := m.Status()
	if st.Camera.Error == "" || st.Microphone.Error != "" || !st.Available {
		t.Fatalf("status %+v", st)
	}
}

// loudSamples decodes a WAV file and counts its samples above 0.1.
func loudSamples(t *testing.T, data []byte) int {
	t.Helper()
	samples, err := robot.DecodeWAV(data)
	if err != nil {
		t.Fatalf("the speaker's file is not a WAV: %v", err)
	}
	n := 0
	for _, s := range samples {
		if math.Abs(float64(s)) > 0.1 {
			n++
		}
	}
	return n
}
