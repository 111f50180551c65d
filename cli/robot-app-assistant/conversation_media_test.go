package main

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/wait"

	"github.com/robothub/robothub/core/robot"
)

// The conversation template on the daemon's media devices, as on the robot but with test ones: its
// microphones are a GStreamer source that the test feeds in real time (silence, then a sentence
// spoken by espeak-ng), its speaker a clocked sink writing what it plays to a file. The app hears
// the sentence, the fake chat server answers with a tool call and speech, the speech reaches the
// speaker's sink, and the head moves with the voice.
func TestConversationTemplateHearsAndSpeaksOnMediaDevices(t *testing.T) {
	for _, tool := range []string{"gst-launch-1.0", "espeak-ng"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (.ci/run installs it)", tool)
		}
	}
	dir := t.TempDir()
	spokenWAV := filepath.Join(dir, "spoken.wav")
	if out, err := exec.Command("espeak-ng", "-w", spokenWAV, "please play a sound").CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v %s", err, out)
	}
	data, err := os.ReadFile(spokenWAV)
	if err != nil {
		t.Fatal(err)
	}
	spoken, err := robot.DecodeWAV(data) // 16 kHz stereo float32
	if err != nil {
		t.Fatal(err)
	}
	micFIFO, sinkFile := filepath.Join(dir, "microphones"), filepath.Join(dir, "speaker.f32")
	if err := syscall.Mkfifo(micFIFO, 0o600); err != nil {
		t.Fatal(err)
	}

	llm := newFakeChat(t)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("OPENAI_BASE_URL", llm.srv.URL+"/v1")
	t.Setenv("OPENAI_MODEL", "test-model")
	webPort := freePort(t)
	dest := t.TempDir()
	if r := runCLI(t, nil, "create", "chatter", dest, "--template", "conversation", "--web-port", strconv.Itoa(webPort)); r.code != 0 {
		t.Fatalf("create: %s", r.stderr)
	}
	d := startDaemon(t, "none",
		"--microphone", "gst:filesrc blocksize=1280 location="+micFIFO+" ! rawaudioparse format=pcm pcm-format=f32le sample-rate=16000 num-channels=2",
		"--speaker", "gst:audio/x-raw,format=F32LE,rate=16000,channels=2 ! filesink sync=true buffer-mode=unbuffered location="+sinkFile)

	// The room: silence in real time, and the sentence once asked for.
	say := make(chan []float32, 1)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		f, err := os.OpenFile(micFIFO, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		var pending []float32
		chunk := make([]float32, 320) // 10 ms of stereo
		// The microphone's clock is the wall clock: each tick writes every 10 ms chunk due since
		// the start, so that a tick a loaded machine drops is no gap of silence in the sentence.
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		start, written := time.Now(), 0
		for {
			select {
			case <-stop:
				return
			case s := <-say:
				pending = append(pending, s...)
			case now := <-tick.C:
				for due := int(now.Sub(start) / (10 * time.Millisecond)); written < due; written++ {
					clear(chunk)
					pending = pending[copy(chunk, pending):]
					b := make([]byte, 4*len(chunk))
					for i, v := range chunk {
						binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
					}
					if _, err := f.Write(b); err != nil {
						return
					}
				}
			}
		}
	}()

	d.install(filepath.Join(dest, "chatter"))
	t.Cleanup(func() { d.remove("chatter") })
	d.startAndWaitRunning("chatter")
	web := "http://127.0.0.1:" + strconv.Itoa(webPort)
	wait.For(t, 10*time.Second, "the app listening", func() bool {
		var st map[string]any
		return callJSON(t, "GET", web+"/api/status", nil, &st) == 200 && st["state"] == "idle"
	})
	// The wobble: the head's target pitch moves while the answer is spoken. A sampler of its own reads
	// the state every 10 ms, so a loaded machine cannot step over the 0.6 s answer.
	pitchLo, pitchHi := math.Inf(1), math.Inf(-1)
	sampling, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-sampling:
				return
			case <-time.After(10 * time.Millisecond): // the sampling period, not a wait for an event
			}
			var s struct {
				Target struct {
					Pitch float64 `json:"pitch"`
				} `json:"target_head_pose"`
			}
			req, _ := http.NewRequest("GET", d.url+"/api/state/full", nil) // not callJSON: t.Fatal belongs to the test's goroutine
			req.Header.Set("Authorization", "Bearer "+ownerToken(d.url+"/"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				continue
			}
			if json.NewDecoder(resp.Body).Decode(&s) == nil && resp.StatusCode == 200 {
				pitchLo, pitchHi = math.Min(pitchLo, s.Target.Pitch), math.Max(pitchHi, s.Target.Pitch)
			}
			resp.Body.Close()
		}
	}()
	say <- spoken

	var status map[string]any
	wait.For(t, 30*time.Second, "the spoken turn to be answered", func() bool {
		callJSON(t, "GET", web+"/api/status", nil, &status)
		return status["heard"] == "Please play a sound." && status["reply"] == "Here is a chime." && status["state"] == "idle"
	})
	close(sampling)
	<-sampled
	_, _, heard, speeches := llm.snapshot()
	if len(heard) != 1 || heard[0].rate != 16000 || heard[0].seconds < 0.8*1.38 || heard[0].rms < 0.02 {
		t.Fatalf("transcription requests %+v: want one WAV at 16 kHz holding the 1.4 s sentence", heard)
	}
	if len(speeches) != 1 || speeches[0] != "Here is a chime." {
		t.Fatalf("speech requests %v", speeches)
	}
	if pitchHi-pitchLo < 0.02 {
		t.Errorf("the head did not move with the voice: target pitch spanned %.4f rad", pitchHi-pitchLo)
	}
	// The answer's voice (a 180 Hz carrier, 0.6 s) reached the speaker's sink.
	wait.For(t, 10*time.Second, "the answer in the speaker's sink", func() bool {
		return voiced(t, sinkFile, 180) >= 0.3
	})
}

// voiced is how many seconds of what the sink wrote are loud and carry a tone near hz (by zero
// crossings of the left channel, in 50 ms windows).
func voiced(t *testing.T, path string, hz float64) float64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	const window = 800 // 50 ms at 16 kHz
	frames := len(data) / 8
	seconds := 0.0
	for start := 0; start+window <= frames; start += window {
		var sum float64
		crossings := 0
		prev := float32(0)
		for i := start; i < start+window; i++ {
			v := math.Float32frombits(binary.LittleEndian.Uint32(data[8*i:]))
			sum += float64(v) * float64(v)
			if (v >= 0) != (prev >= 0) {
				crossings++
			}
			prev = v
		}
		rate := float64(crossings) / 2 / 0.05
		if math.Sqrt(sum/window) > 0.05 && math.Abs(rate-hz) < 0.15*hz {
			seconds += 0.05
		}
	}
	return seconds
}
