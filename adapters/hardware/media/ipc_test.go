package media

import (
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func serveSocket(t *testing.T, m *Media, allow func(net.Conn) error) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "media.sock")
	srv, err := ListenSocket(m, path, SocketOptions{Allow: allow}, m.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return path
}

func TestSocketGivesFramesAsCaptured(t *testing.T) {
	needGst(t)
	m := openTest(t, Options{Camera: DeviceTest, Microphone: DeviceNone, Speaker: DeviceNone, Mode: VideoMode{160, 120, 30}})
	path := serveSocket(t, m, nil)
	c, err := DialSocket(path, "video")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var prev Frame
	for i := range 5 {
		f, err := c.Frame()
		if err != nil {
			t.Fatal(err)
		}
		if f.Width != 160 || f.Height != 120 || len(f.BGR) != 160*120*3 {
			t.Fatalf("frame %d is %dx%d with %d bytes", i, f.Width, f.Height, len(f.BGR))
		}
		if age := time.Since(f.Captured); age < 0 || age > time.Second {
			t.Fatalf("frame %d was captured %s ago", i, age)
		}
		if i > 0 && f.Seq <= prev.Seq {
			t.Fatalf("frame %d has seq %d after %d", i, f.Seq, prev.Seq)
		}
		prev = f
	}
}

func TestSocketPlaysWhatIsWrittenAndGivesWhatIsHeard(t *testing.T) {
	m := openTest(t, Options{Camera: DeviceNone, Microphone: DeviceLoopback, Speaker: DeviceLoopback})
	path := serveSocket(t, m, nil)
	audio, err := DialSocket(path, "audio")
	if err != nil {
		t.Fatal(err)
	}
	defer audio.Close()
	play, err := DialSocket(path, "play")
	if err != nil {
		t.Fatal(err)
	}
	defer play.Close()
	click := make([]float32, 320*Channels)
	for i := 0; i < len(click); i += 2 {
		click[i], click[i+1] = 0.5, -0.5
	}
	if err := play.Play(click); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for heard := 0; heard < 320; {
		if time.Now().After(deadline) {
			t.Fatalf("heard %d of the 320 frames played through the socket", heard)
		}
		ch, err := audio.Chunk()
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(ch.Samples); i += 2 {
			if ch.Samples[i] == 0.5 && ch.Samples[i+1] == -0.5 {
				heard++
			}
		}
	}
}

func TestSocketRefusalsAreExplained(t *testing.T) {
	m := openTest(t, Options{Camera: DeviceNone, Microphone: DeviceLoopback, Speaker: DeviceLoopback})
	path := serveSocket(t, m, func(c net.Conn) error { return errors.New("user 1001 is not the daemon's user") })
	// The refusal reaches the client when it dials (the server hung up before reading the stream's
	// name) or at its first read, whichever comes first: both say why.
	c, err := DialSocket(path, "audio")
	if err == nil {
		defer c.Close()
		_, err = c.Chunk()
	}
	if err == nil || !strings.Contains(err.Error(), "not the daemon's user") {
		t.Fatalf("a refused client reads %v", err)
	}

	path = serveSocket(t, m, nil)
	video, _ := DialSocket(path, "video")
	defer video.Close()
	if _, err := video.Frame(); err == nil || !strings.Contains(err.Error(), "camera off") {
		t.Fatalf("video without a camera: %v", err)
	}
	odd, _ := DialSocket(path, "telnet")
	defer odd.Close()
	if _, err := odd.Frame(); err == nil || !strings.Contains(err.Error(), `unknown stream "telnet"`) {
		t.Fatalf("an unknown stream: %v", err)
	}
	if _, err := ListenSocket(m, path, SocketOptions{}, m.log); err == nil || !strings.Contains(err.Error(), "another daemon serves it") {
		t.Fatalf("a second server on a live socket: %v", err)
	}
}
