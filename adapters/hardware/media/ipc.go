package media

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"strings"
	"sync"
	"time"
)

// The local media socket: apps on the robot get frames and sound from it as the daemon captured
// them, with no encoding (the public daemon's unixfdsink IPC, in our own protocol). A client
// connects, writes one line naming a stream, and then:
//
//	"video\n"  reads frames:  "RBF1" width:u32 height:u32 seq:u64 captured:i64 (Unix ns), then
//	           width*height*3 bytes of BGR rows. A slow reader gets the newest frame, never a backlog.
//	"audio\n"  reads chunks:  "RBA1" frames:u32 captured:i64, then frames*2 float32 (left, right).
//	"play\n"   writes chunks: "RBP1" frames:u32, then frames*2 float32, queued on the speaker.
//
// Integers are little-endian. A stream that cannot be served is answered "ERR message\n" and
// closed. A socket copies each frame once more than shared memory would; a stamped frame written
// into the camera pipeline reaches an app in 3.6 ms (p50) on this project's 2-core test machine,
// gst-launch and the socket included (BenchmarkFrameLatencyLocal), and a shared-memory ring would
// need a protocol Python cannot read without a C extension or file-descriptor passing.
const (
	videoMagic = "RBF1"
	audioMagic = "RBA1"
	playMagic  = "RBP1"
	// VideoHeaderSize and AudioHeaderSize are the sizes of the headers before each frame and chunk.
	VideoHeaderSize = 4 + 4 + 4 + 8 + 8
	AudioHeaderSize = 4 + 4 + 8
	// maxPlayFrames bounds one play chunk: 10 s.
	maxPlayFrames = 10 * SampleRate
)

// SocketOptions are what the daemon adds to the socket's protocol.
type SocketOptions struct {
	// Allow, if set, refuses a connection by returning an error (the daemon checks the peer's user).
	Allow func(net.Conn) error
	// Play, if set, plays what apps write (the robot's PushAudio, which also wobbles the head with
	// the sound); Media.Play otherwise.
	Play func(samples []float32) error
}

// SocketServer serves the local media socket.
type SocketServer struct {
	media  *Media
	log    *slog.Logger
	ln     net.Listener
	allow  func(net.Conn) error
	play   func([]float32) error
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// ListenSocket listens on the unix socket at path (replacing a stale one), readable and writable
// by the daemon's user only.
func ListenSocket(m *Media, path string, opts SocketOptions, log *slog.Logger) (*SocketServer, error) {
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		return nil, fmt.Errorf("media socket %s: another daemon serves it", path)
	}
	_ = os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("media socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("media socket: %w", err)
	}
	s := &SocketServer{media: m, log: log, ln: ln, allow: opts.Allow, play: opts.Play, conns: map[net.Conn]struct{}{}}
	if s.play == nil {
		s.play = m.Play
	}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Path is the socket's path.
func (s *SocketServer) Path() string { return s.ln.Addr().String() }

// Close stops serving and closes every connection.
func (s *SocketServer) Close() error {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	err := s.ln.Close()
	s.wg.Wait()
	return err
}

func (s *SocketServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				c.Close()
			}()
			if err := s.serve(c); err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.EOF) {
				s.log.Debug("media socket client", "err", err)
			}
		}()
	}
}

func (s *SocketServer) serve(c net.Conn) error {
	if s.allow != nil {
		if err := s.allow(c); err != nil {
			fmt.Fprintf(c, "ERR %s\n", err)
			return err
		}
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReaderSize(c, 64)
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	_ = c.SetReadDeadline(time.Time{})
	switch strings.TrimSpace(line) {
	case "video":
		return s.serveVideo(c, r)
	case "audio":
		return s.serveAudio(c, r)
	case "play":
		return s.servePlay(c, r)
	}
	fmt.Fprintf(c, "ERR unknown stream %q: video, audio or play\n", strings.TrimSpace(line))
	return nil
}

// closedBy returns a channel closed when the client hangs up (it sends nothing after its line).
func closedBy(r io.Reader) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, r)
		close(done)
	}()
	return done
}

func (s *SocketServer) serveVideo(c net.Conn, r io.Reader) error {
	frames, stop, err := s.media.Frames()
	if err != nil {
		fmt.Fprintf(c, "ERR %s\n", err)
		return err
	}
	defer stop()
	gone := closedBy(r)
	hdr := make([]byte, VideoHeaderSize)
	for {
		select {
		case <-gone:
			return nil
		case f, ok := <-frames:
			if !ok {
				return nil
			}
			copy(hdr, videoMagic)
			binary.LittleEndian.PutUint32(hdr[4:], uint32(f.Width))
			binary.LittleEndian.PutUint32(hdr[8:], uint32(f.Height))
			binary.LittleEndian.PutUint64(hdr[12:], f.Seq)
			binary.LittleEndian.PutUint64(hdr[20:], uint64(f.Captured.UnixNano()))
			if _, err := (&net.Buffers{hdr, f.BGR}).WriteTo(c); err != nil {
				return err
			}
		}
	}
}

func (s *SocketServer) serveAudio(c net.Conn, r io.Reader) error {
	chunks, stop, err := s.media.Chunks()
	if err != nil {
		fmt.Fprintf(c, "ERR %s\n", err)
		return err
	}
	defer stop()
	gone := closedBy(r)
	hdr := make([]byte, AudioHeaderSize)
	for {
		select {
		case <-gone:
			return nil
		case ch, ok := <-chunks:
			if !ok {
				return nil
			}
			copy(hdr, audioMagic)
			binary.LittleEndian.PutUint32(hdr[4:], uint32(len(ch.Samples)/Channels))
			binary.LittleEndian.PutUint64(hdr[8:], uint64(ch.Captured.UnixNano()))
			if _, err := (&net.Buffers{hdr, floatBytes(ch.Samples)}).WriteTo(c); err != nil {
				return err
			}
		}
	}
}

func (s *SocketServer) servePlay(c net.Conn, r io.Reader) error {
	if err := s.media.Play(nil); err != nil {
		fmt.Fprintf(c, "ERR %s\n", err)
		return err
	}
	hdr := make([]byte, 8)
	for {
		if _, err := io.ReadFull(r, hdr); err != nil {
			return err
		}
		n := binary.LittleEndian.Uint32(hdr[4:])
		if string(hdr[:4]) != playMagic || n > maxPlayFrames {
			fmt.Fprintf(c, "ERR a play chunk is %q and at most %d frames\n", playMagic, maxPlayFrames)
			return errors.New("bad play chunk")
		}
		data := make([]byte, int(n)*Channels*4)
		if _, err := io.ReadFull(r, data); err != nil {
			return err
		}
		samples := floats(data)
		for i, v := range samples {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				fmt.Fprintf(c, "ERR sample %d is not a finite number\n", i)
				return errors.New("non-finite sample")
			}
			samples[i] = max(-1, min(1, v))
		}
		if err := s.play(samples); err != nil {
			fmt.Fprintf(c, "ERR %s\n", err)
			return err
		}
	}
}
