package media

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// SocketClient reads one stream of the local media socket (or writes the play stream): what
// robot_sdk does in Python, in Go for the daemon's tests and benchmarks and for Go programs on
// the robot.
type SocketClient struct {
	c   net.Conn
	r   *bufio.Reader
	hdr []byte
}

// DialSocket opens stream ("video", "audio" or "play") on the socket at path.
func DialSocket(path, stream string) (*SocketClient, error) {
	c, err := net.Dial("unix", path)
	if err != nil {
		return nil, err
	}
	s := &SocketClient{c: c, r: bufio.NewReaderSize(c, 1<<16), hdr: make([]byte, VideoHeaderSize)}
	if _, err := io.WriteString(c, stream+"\n"); err != nil {
		// A server that refuses a client (another user) answers and hangs up before reading the
		// stream's name, so the write can fail with EPIPE: its reason is still in the socket.
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		if _, rerr := io.ReadFull(s.r, s.hdr[:4]); rerr == nil && string(s.hdr[:4]) == "ERR " {
			err = s.refused(s.hdr[:4])
		}
		c.Close()
		return nil, err
	}
	return s, nil
}

// Close hangs up.
func (s *SocketClient) Close() error { return s.c.Close() }

// refused reads the server's "ERR ..." line when a stream was refused.
func (s *SocketClient) refused(first []byte) error {
	if string(first) != "ERR " {
		return fmt.Errorf("media socket: unexpected %q", first)
	}
	line, _ := s.r.ReadString('\n')
	return errors.New(strings.TrimSpace(line))
}

// Frame reads the next frame of the video stream.
func (s *SocketClient) Frame() (Frame, error) {
	if _, err := io.ReadFull(s.r, s.hdr[:4]); err != nil {
		return Frame{}, err
	}
	if string(s.hdr[:4]) != videoMagic {
		return Frame{}, s.refused(s.hdr[:4])
	}
	if _, err := io.ReadFull(s.r, s.hdr[4:VideoHeaderSize]); err != nil {
		return Frame{}, err
	}
	f := Frame{Width: int(binary.LittleEndian.Uint32(s.hdr[4:])), Height: int(binary.LittleEndian.Uint32(s.hdr[8:])),
		Seq: binary.LittleEndian.Uint64(s.hdr[12:]), Captured: time.Unix(0, int64(binary.LittleEndian.Uint64(s.hdr[20:])))}
	f.BGR = make([]byte, f.Width*f.Height*3)
	_, err := io.ReadFull(s.r, f.BGR)
	return f, err
}

// Chunk reads the next chunk of the audio stream.
func (s *SocketClient) Chunk() (Chunk, error) {
	if _, err := io.ReadFull(s.r, s.hdr[:4]); err != nil {
		return Chunk{}, err
	}
	if string(s.hdr[:4]) != audioMagic {
		return Chunk{}, s.refused(s.hdr[:4])
	}
	if _, err := io.ReadFull(s.r, s.hdr[4:AudioHeaderSize]); err != nil {
		return Chunk{}, err
	}
	n := binary.LittleEndian.Uint32(s.hdr[4:])
	data := make([]byte, int(n)*Channels*4)
	if _, err := io.ReadFull(s.r, data); err != nil {
		return Chunk{}, err
	}
	return Chunk{Samples: floats(data), Captured: time.Unix(0, int64(binary.LittleEndian.Uint64(s.hdr[8:])))}, nil
}

// Play writes interleaved stereo samples to the play stream.
func (s *SocketClient) Play(samples []float32) error {
	hdr := make([]byte, 8)
	copy(hdr, playMagic)
	binary.LittleEndian.PutUint32(hdr[4:], uint32(len(samples)/Channels))
	_, err := (&net.Buffers{hdr, floatBytes(samples[:len(samples)/Channels*Channels])}).WriteTo(s.c)
	return err
}
