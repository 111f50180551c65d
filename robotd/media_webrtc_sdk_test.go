package robotd_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sdkOverWebRTC is a program as a user runs it on a laptop: media_backend="webrtc" takes the
// camera and the microphones over WebRTC (aiortc) as from a robot on another machine. It prints
// what it got: the frames' shape and whether two differ, the sound's shape, level and pitch.
const sdkOverWebRTC = `import time
import numpy
from robot_sdk import Robot

with Robot(media_backend="webrtc") as robot:
    print("transport", robot.media.transport, flush=True)
    a = robot.media.get_frame()
    b = robot.media.get_frame()
    print("frames", "x".join(map(str, a.shape)), a.dtype, int((a != b).any()), flush=True)
    robot.media.start_recording()
    chunks, n = [], 0
    deadline = time.monotonic() + 20
    while n < 16000 and time.monotonic() < deadline:
        s = robot.media.get_audio_sample()
        if s is None:
            time.sleep(0.02)  # polling the SDK, as apps do; the deadline bounds it
            continue
        chunks.append(s)
        n += len(s)
    robot.media.stop_recording()
    sound = numpy.concatenate(chunks)
    left = sound[:, 0].astype(numpy.float64)
    spectrum = numpy.abs(numpy.fft.rfft(left * numpy.hanning(len(left))))
    pitch = numpy.fft.rfftfreq(len(left), 1 / robot.media.get_input_audio_samplerate())[spectrum.argmax()]
    rms = float(numpy.sqrt((sound.astype(numpy.float64) ** 2).mean()))
    print("sound", "x".join(map(str, sound.shape)), sound.dtype, "%.4f" % rms, "%.1f" % pitch, flush=True)
`

// A program off the robot gets the camera and the microphones as the robot's own apps do (BGR
// frames, (n, 2) float32 at 16 kHz) over WebRTC, signalled through the daemon's API.
func TestSDKGetsFramesAndSoundOverWebRTC(t *testing.T) {
	parallel(t)
	needGst(t)
	if err := exec.Command(systemPython, "-c", "import numpy, aiortc, av").Run(); err != nil {
		t.Fatalf("%s cannot import numpy, aiortc and av: install Debian's python3-aiortc (%v)", systemPython, err)
	}
	d := startDaemon(t, daemonOptions{args: []string{"--camera", "test", "--microphone", "gst:audiotestsrc is-live=true wave=sine freq=1000 volume=0.5", "--speaker", "test"}})
	path := filepath.Join(t.TempDir(), "webrtc_media.py")
	if err := os.WriteFile(path, []byte(sdkOverWebRTC), 0o644); err != nil {
		t.Fatal(err)
	}
	s := runScript(t, d, d.venv, path)
	s.wait(t, 90*time.Second)
	out := s.stdout.String()
	if !strings.Contains(out, "transport webrtc") {
		t.Fatalf("the SDK did not take media over WebRTC:\n%s", out)
	}
	if !strings.Contains(out, "frames 480x640x3 uint8 1") {
		t.Fatalf("want two different 480x640 BGR frames:\n%s", out)
	}
	m := regexp.MustCompile(`sound (\d+)x2 float32 ([0-9.]+) ([0-9.]+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("want (n, 2) float32 sound:\n%s", out)
	}
	n, _ := strconv.Atoi(m[1])
	rms, _ := strconv.ParseFloat(m[2], 64)
	pitch, _ := strconv.ParseFloat(m[3], 64)
	// A sine of amplitude 0.5 has an RMS of 0.35; Opus keeps it within a few percent. Its pitch
	// at the SDK's 16 kHz says the sound was resampled, not relabelled.
	if n < 16000 || rms < 0.25 || rms > 0.45 || pitch < 990 || pitch > 1010 {
		t.Fatalf("the 1 kHz test tone arrived as %d frames, RMS %.3f, pitch %.1f Hz:\n%s", n, rms, pitch, out)
	}
	// The daemon saw a WebRTC peer (not HTTP frame requests).
	if !regexp.MustCompile(`msg="webrtc peer" .*state=connected`).MatchString(d.log.String()) {
		t.Fatalf("the daemon's log shows no WebRTC peer connecting:\n%s", d.log.String())
	}
}
