package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/wait"
)

// fakeChat is a local OpenAI-compatible server: chat completions that call the robot's tools,
// transcriptions, and speech as WAV. It records what the app sent.
type fakeChat struct {
	srv *httptest.Server

	mu             sync.Mutex
	chats          []chatRequest
	auth           []string
	transcriptions []heardWAV
	speeches       []string
}

type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    *string         `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  json.RawMessage `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// heardWAV describes a WAV file the app sent for transcription.
type heardWAV struct {
	model      string
	rate       int
	seconds    float64
	rms        float64
	bitsPerSec int
}

func newFakeChat(t *testing.T) *fakeChat {
	f := &fakeChat{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", f.chat)
	mux.HandleFunc("POST /v1/audio/transcriptions", f.transcribe)
	mux.HandleFunc("POST /v1/audio/speech", f.speech)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func toolCall(id, name string, args map[string]any) map[string]any {
	a, _ := json.Marshal(args)
	return map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": string(a)}}
}

// chat answers by a script: a request to move the antennas or to play a sound gets a tool call,
// a tool result gets a sentence about it, anything else a greeting.
func (f *fakeChat) chat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error": {"message": "bad JSON"}}`, 400)
		return
	}
	f.mu.Lock()
	f.chats = append(f.chats, req)
	f.mu.Unlock()
	last := req.Messages[len(req.Messages)-1]
	content := ""
	if last.Content != nil {
		content = *last.Content
	}
	message := map[string]any{"role": "assistant", "content": "Hello there."}
	switch {
	case last.Role == "user" && strings.Contains(content, "antennas"):
		message = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
			toolCall("call_1", "move_antennas", map[string]any{"left_deg": 40, "right_deg": -40, "duration": 0.3})}}
	case last.Role == "user" && strings.Contains(content, "sound"):
		message = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
			toolCall("call_2", "play_sound", map[string]any{"name": "chime"})}}
	case last.Role == "tool" && strings.Contains(content, `"left_deg"`):
		message["content"] = "Antennas up!"
	case last.Role == "tool" && strings.Contains(content, `"sound": "chime"`):
		message["content"] = "Here is a chime."
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": "stop"}}})
}

func (f *fakeChat) transcribe(w http.ResponseWriter, r *http.Request) {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		http.Error(w, `{"error": {"message": "not multipart"}}`, 400)
		return
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	var heard heardWAV
	for {
		part, err := mr.NextPart()
		if err != nil {
			break
		}
		data, _ := io.ReadAll(part)
		switch part.FormName() {
		case "model":
			heard.model = string(data)
		case "file":
			if len(data) < 44 || string(data[:4]) != "RIFF" || string(data[8:12]) != "WAVE" {
				http.Error(w, `{"error": {"message": "not a WAV file"}}`, 400)
				return
			}
			heard.rate = int(binary.LittleEndian.Uint32(data[24:28]))
			bits := int(binary.LittleEndian.Uint16(data[34:36]))
			heard.bitsPerSec = heard.rate * bits
			pcm := data[44:]
			var sum float64
			n := len(pcm) / 2
			for i := range n {
				v := float64(int16(binary.LittleEndian.Uint16(pcm[2*i:]))) / 32768
				sum += v * v
			}
			heard.seconds = float64(n) / float64(heard.rate)
			if n > 0 {
				heard.rms = math.Sqrt(sum / float64(n))
			}
		}
	}
	f.mu.Lock()
	f.transcriptions = append(f.transcriptions, heard)
	f.mu.Unlock()
	_ = json.NewEncoder(w).Encode(map[string]string{"text": "Please play a sound."})
}

// speech answers with 0.6 s of a 24 kHz 16-bit WAV, as OpenAI's speech API does.
func (f *fakeChat) speech(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Input          string `json:"input"`
		ResponseFormat string `json:"response_format"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	f.mu.Lock()
	f.speeches = append(f.speeches, req.Input)
	f.mu.Unlock()
	const rate = 24000
	n := rate * 6 / 10
	pcm := make([]byte, 2*n)
	for i := range n {
		t := float64(i) / rate
		v := 0.5 * math.Abs(math.Sin(2*math.Pi*3*t)) * math.Sin(2*math.Pi*180*t)
		binary.LittleEndian.PutUint16(pcm[2*i:], uint16(int16(v*32767)))
	}
	w.Header().Set("Content-Type", "audio/wav")
	_, _ = w.Write(wavFile(rate, pcm))
}

func wavFile(rate int, pcm []byte) []byte {
	var b bytes.Buffer
	b.WriteString("RIFF")
	_ = binary.Write(&b, binary.LittleEndian, uint32(36+len(pcm)))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(rate), uint32(rate * 2), uint16(2), uint16(16)} {
		_ = binary.Write(&b, binary.LittleEndian, v)
	}
	b.WriteString("data")
	_ = binary.Write(&b, binary.LittleEndian, uint32(len(pcm)))
	b.Write(pcm)
	return b.Bytes()
}

func (f *fakeChat) snapshot() (chats []chatRequest, auth []string, heard []heardWAV, speeches []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]chatRequest(nil), f.chats...), append([]string(nil), f.auth...),
		append([]heardWAV(nil), f.transcriptions...), append([]string(nil), f.speeches...)
}

// The conversation template, run by the daemon, against a local fake chat server: settings from
// its web page, a typed turn with a tool call that moves the antennas and a spoken answer with a
// head wobble, then a spoken turn heard through the microphone that plays a sound.
func TestConversationTemplateAgainstAFakeChatServer(t *testing.T) {
	llm := newFakeChat(t)
	configHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", configHome) // the app inherits the daemon's environment
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	webPort := freePort(t)
	dest := t.TempDir()
	if r := runCLI(t, nil, "create", "talker", dest, "--template", "conversation", "--web-port", strconv.Itoa(webPort)); r.code != 0 {
		t.Fatalf("create: %s", r.stderr)
	}
	dir := filepath.Join(dest, "talker")
	if r := runCLI(t, nil, "check", dir); r.code != 0 {
		t.Fatalf("check of the conversation template:\n%s\n%s", r.stdout, r.stderr)
	}
	d := startDaemon(t, "none")
	d.install(dir)
	t.Cleanup(func() { d.remove("talker") })
	d.startAndWaitRunning("talker")
	web := "http://127.0.0.1:" + strconv.Itoa(webPort)
	appReady := func() bool { // run() has started: the conversation exists
		var st map[string]any
		return callJSON(t, "GET", web+"/api/status", nil, &st) == 200 && st["state"] == "idle"
	}
	wait.For(t, 5*time.Second, "the app's page", appReady)

	// Settings through the web page: checked, saved to the config file, the key never shown.
	var problem map[string]string
	if code := callJSON(t, "POST", web+"/api/config", map[string]any{"base_url": "ftp://nowhere"}, &problem); code != 422 ||
		!strings.Contains(problem["detail"], "base_url: an http(s) URL") {
		t.Fatalf("bad base_url: %d %v", code, problem)
	}
	if code := callJSON(t, "POST", web+"/api/config", map[string]any{"temperature": 3}, &problem); code != 422 ||
		!strings.Contains(problem["detail"], "temperature: not a setting") {
		t.Fatalf("unknown setting: %d %v", code, problem)
	}
	key := "sk-test-secret-123"
	var cfg map[string]any
	if code := callJSON(t, "POST", web+"/api/config", map[string]any{"base_url": llm.srv.URL + "/v1", "model": "test-model", "api_key": key}, &cfg); code != 200 {
		t.Fatalf("config: %d %v", code, cfg)
	}
	configFile := filepath.Join(configHome, "talker", "config.json")
	if cfg["has_api_key"] != true || cfg["config_path"] != configFile || strings.Contains(mustJSON(cfg), key) {
		t.Fatalf("config answer %v", cfg)
	}
	info, err := os.Stat(configFile)
	if err != nil || info.Mode().Perm() != 0o600 || !strings.Contains(readFile(t, configFile), key) {
		t.Fatalf("config file %s: %v %v", configFile, info, err)
	}

	// A typed turn: the model calls move_antennas, then answers; the answer is spoken.
	var turn struct {
		Reply string `json:"reply"`
		Tools []struct {
			Name   string         `json:"name"`
			Result map[string]any `json:"result"`
		} `json:"tools"`
	}
	if code := callJSON(t, "POST", web+"/api/say", map[string]string{"text": "Wave your antennas!"}, &turn); code != 200 {
		t.Fatalf("say: %d %+v", code, turn)
	}
	if turn.Reply != "Antennas up!" || len(turn.Tools) != 1 || turn.Tools[0].Name != "move_antennas" ||
		turn.Tools[0].Result["status"] != "moving" || turn.Tools[0].Result["left_deg"] != 40.0 {
		t.Fatalf("turn %+v", turn)
	}
	// The answer is being spoken: the head wobbles with the voice.
	pitchLo, pitchHi := math.Inf(1), math.Inf(-1)
	for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end); time.Sleep(15 * time.Millisecond) {
		var s struct {
			Target struct {
				Pitch float64 `json:"pitch"`
			} `json:"target_head_pose"`
		}
		callJSON(t, "GET", d.url+"/api/state/full", nil, &s)
		pitchLo, pitchHi = math.Min(pitchLo, s.Target.Pitch), math.Max(pitchHi, s.Target.Pitch)
	}
	if pitchHi-pitchLo < 0.02 {
		t.Errorf("no speech wobble: head pitch target moved %.4f rad while speaking", pitchHi-pitchLo)
	}
	// The tool's base pose holds once the voice is done: left antenna at +40
	// degrees, right at -40. The state lists them [right, left], as the SDK does.
	wait.For(t, 3*time.Second, "the antennas at right -40, left +40 degrees", func() bool {
		var s robotState
		callJSON(t, "GET", d.url+"/api/state/full", nil, &s)
		return math.Abs(s.Antennas[0]+0.698) < 0.05 && math.Abs(s.Antennas[1]-0.698) < 0.05
	})
	chats, auth, _, speeches := llm.snapshot()
	if len(chats) != 2 || chats[0].Model != "test-model" || len(chats[0].Tools) != 3 {
		t.Fatalf("chat requests: %+v", chats)
	}
	var toolNames []string
	for _, tl := range chats[0].Tools {
		toolNames = append(toolNames, tl.Function.Name)
	}
	if strings.Join(toolNames, ",") != "move_head,move_antennas,play_sound" {
		t.Errorf("tools %v", toolNames)
	}
	if m := chats[1].Messages[len(chats[1].Messages)-1]; m.Role != "tool" || m.ToolCallID != "call_1" {
		t.Errorf("second chat request does not end with the tool result: %+v", m)
	}
	for _, a := range auth {
		if a != "Bearer "+key {
			t.Errorf("Authorization %q", a)
		}
	}
	if len(speeches) != 1 || speeches[0] != "Antennas up!" {
		t.Errorf("speech requests %v", speeches)
	}
	// The robot does not hear itself: its ears stay muted while it speaks and a moment after, which its
	// status shows, and nothing it said was transcribed.
	wait.For(t, 10*time.Second, "the app listening again after speaking", func() bool {
		var status map[string]any
		callJSON(t, "GET", web+"/api/status", nil, &status)
		return status["listening"] == true
	})
	if _, _, heard, _ := llm.snapshot(); len(heard) != 0 {
		t.Fatalf("the app transcribed its own voice: %+v", heard)
	}

	// A spoken turn: someone talks near the robot (the simulated speaker plays into the microphone).
	voice := make([]float64, 16000)
	for i := range voice {
		t := float64(i) / 16000
		voice[i] = (0.15 + 0.15*math.Abs(math.Sin(2*math.Pi*2*t))) * math.Sin(2*math.Pi*220*t)
	}
	if code := callJSON(t, "POST", d.url+"/api/audio/push_sample", map[string]any{"samples": voice}, nil); code != 200 {
		t.Fatalf("push_sample: %d", code)
	}
	var status map[string]any
	// The reply shows in the status before it is spoken: the turn ends (idle) once it is said.
	wait.For(t, 15*time.Second, "the spoken turn", func() bool {
		callJSON(t, "GET", web+"/api/status", nil, &status)
		return status["heard"] == "Please play a sound." && status["reply"] == "Here is a chime." && status["state"] == "idle"
	})
	chats, _, heard, speeches := llm.snapshot()
	if len(heard) != 1 || heard[0].model != "whisper-1" || heard[0].rate != 16000 || heard[0].seconds < 0.9 || heard[0].seconds > 2.0 || heard[0].rms < 0.05 {
		t.Fatalf("transcription requests %+v: want one WAV at 16 kHz holding the 1 s of speech, and nothing of the robot's own voice", heard)
	}
	if last := chats[len(chats)-1].Messages; last[len(last)-1].Role != "tool" || !strings.Contains(*last[len(last)-1].Content, `"status": "playing"`) {
		t.Errorf("play_sound result: %+v", last[len(last)-1])
	}
	if speeches[len(speeches)-1] != "Here is a chime." {
		t.Errorf("speech requests %v", speeches)
	}

	// Stop, start again: the settings come back from the config file.
	d.stopApp(t)
	d.startAndWaitRunning("talker")
	wait.For(t, 5*time.Second, "the app's page after a restart", appReady)
	callJSON(t, "GET", web+"/api/config", nil, &cfg)
	if cfg["base_url"] != llm.srv.URL+"/v1" || cfg["model"] != "test-model" || cfg["has_api_key"] != true {
		t.Fatalf("settings after a restart: %v", cfg)
	}
	d.stopApp(t)
	if strings.Contains(d.log.String(), key) {
		t.Fatal("the API key shows in the daemon's log")
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
