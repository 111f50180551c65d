package media

import (
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/robothub/robothub/adapters/hardware/usbdev"
)

// Latency benchmarks: test frames and sounds stamped with the time they enter the pipeline,
// written by the benchmark into a FIFO that the daemon's own pipelines read (a gst: source), and
// read back where an app, a WebRTC peer or the speaker gets them.

// fifo makes a named pipe.
func fifo(b *testing.B, name string) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), name)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// stampedFrames writes 640x480 BGR frames at 30 fps into path until stop closes: each carries
// the time it was written, as 64 black or white 16x16 blocks along its top (a VP8 encoder keeps
// them) and as its first 8 bytes (which the raw path keeps exactly).
func stampedFrames(b *testing.B, path string, mode VideoMode, stop <-chan struct{}) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		b.Error(err)
		return
	}
	defer f.Close()
	frame := make([]byte, mode.frameBytes())
	t := time.NewTicker(time.Second / time.Duration(mode.FPS))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		now := time.Now().UnixNano()
		for bit := range 64 {
			v := byte(0)
			if now>>bit&1 == 1 {
				v = 255
			}
			bx, by := bit%(mode.Width/16), bit/(mode.Width/16)
			for y := by * 16; y < by*16+16; y++ {
				row := frame[(y*mode.Width+bx*16)*3 : (y*mode.Width+bx*16+16)*3]
				for i := range row {
					row[i] = v
				}
			}
		}
		binary.LittleEndian.PutUint64(frame, uint64(now))
		if _, err := f.Write(frame); err != nil {
			return
		}
	}
}

// blockStamp reads the time back from a frame's blocks (after lossy coding: each block's centre).
func blockStamp(bgr []byte, width int) time.Time {
	var ns uint64
	for bit := range 64 {
		bx, by := bit%(width/16), bit/(width/16)
		i := ((by*16+8)*width + bx*16 + 8) * 3
		if int(bgr[i])+int(bgr[i+1])+int(bgr[i+2]) > 3*128 {
			ns |= 1 << bit
		}
	}
	return time.Unix(0, int64(ns))
}

func percentiles(b *testing.B, d []time.Duration, prefix string) {
	b.Helper()
	if len(d) == 0 {
		b.Fatal("nothing measured")
	}
	slices.Sort(d)
	at := func(p float64) float64 {
		return float64(d[min(len(d)-1, int(math.Ceil(p*float64(len(d))))-1)]) / 1e6
	}
	b.ReportMetric(at(0.50), prefix+"-p50-ms")
	b.ReportMetric(at(0.99), prefix+"-p99-ms")
}

const benchFrames = 300 // 10 s at 30 fps

// BenchmarkFrameLatencyLocal: a stamped frame enters the camera pipeline; an app reads it from
// the media socket. The latency is from the write into the pipeline to the app holding it.
func BenchmarkFrameLatencyLocal(b *testing.B) {
	needGstB(b)
	mode := DefaultVideoMode
	for b.Loop() {
		src := fifo(b, "camera")
		m := Open(Options{Camera: "gst:filesrc location=" + src + " ! rawvideoparse width=640 height=480 format=bgr framerate=30/1",
			Microphone: DeviceNone, Speaker: DeviceNone, Mode: mode, Sysfs: usbdev.Sysfs(b.TempDir())})
		sock := filepath.Join(b.TempDir(), "media.sock")
		srv, err := ListenSocket(m, sock, SocketOptions{}, m.log)
		if err != nil {
			b.Fatal(err)
		}
		c, err := DialSocket(sock, "video")
		if err != nil {
			b.Fatal(err)
		}
		stop := make(chan struct{})
		go stampedFrames(b, src, mode, stop)
		var lat []time.Duration
		for len(lat) < benchFrames {
			f, err := c.Frame()
			if err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(time.Unix(0, int64(binary.LittleEndian.Uint64(f.BGR)))))
		}
		close(stop)
		c.Close()
		srv.Close()
		m.Close()
		percentiles(b, lat[30:], "frame") // the first second warms the pipeline up
	}
}

// BenchmarkFrameLatencyWebRTC: a stamped frame enters the camera pipeline; a Go peer on loopback
// receives it over WebRTC (VP8) and decodes it with GStreamer's vp8dec, as a browser would decode
// it. The latency is from the write into the pipeline to the decoded frame.
func BenchmarkFrameLatencyWebRTC(b *testing.B) {
	needGstB(b)
	mode := DefaultVideoMode
	for b.Loop() {
		src := fifo(b, "camera")
		m := Open(Options{Camera: "gst:filesrc location=" + src + " ! rawvideoparse width=640 height=480 format=bgr framerate=30/1",
			Microphone: DeviceNone, Speaker: DeviceNone, Mode: mode, Sysfs: usbdev.Sysfs(b.TempDir())})
		w, err := NewWebRTC(m, true, m.log)
		if err != nil {
			b.Fatal(err)
		}
		stop := make(chan struct{})
		go stampedFrames(b, src, mode, stop)
		p := newPeer(b)
		p.connect(b, w)
		var track = <-p.tracks
		dec, err := startGstFilter("fdsrc fd=3 ! application/x-rtp-stream,media=video,clock-rate=90000,encoding-name=VP8 ! rtpstreamdepay ! "+
			"rtpvp8depay ! vp8dec ! videoconvert ! video/x-raw,format=BGR,width=640,height=480 ! fdsink fd=4 sync=false", m.log)
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			for {
				pkt, _, err := track.ReadRTP()
				if err != nil {
					return
				}
				raw, _ := pkt.Marshal()
				if _, err := dec.data.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(raw))), raw...)); err != nil {
					return
				}
			}
		}()
		var lat []time.Duration
		frame := make([]byte, mode.frameBytes())
		for len(lat) < benchFrames {
			if _, err := io.ReadFull(dec.out, frame); err != nil {
				b.Fatalf("decoding: %v (%v)", err, dec.failure())
			}
			if d := time.Since(blockStamp(frame, mode.Width)); d > 0 && d < 10*time.Second {
				lat = append(lat, d)
			}
		}
		close(stop)
		p.pc.Close()
		dec.stop()
		w.Close()
		m.Close()
		percentiles(b, lat[30:], "frame")
	}
}

// BenchmarkAudioLatency: a click enters the microphone pipeline every 200 ms and an app reads it
// from the media socket (capture to app); the app writes a click to the socket's play stream and
// it comes out of the speaker's sink, clocked in real time (app to sink).
func BenchmarkAudioLatency(b *testing.B) {
	needGstB(b)
	for b.Loop() {
		micIn, spkOut := fifo(b, "mic"), fifo(b, "speaker")
		m := Open(Options{Camera: DeviceNone, Sysfs: usbdev.Sysfs(b.TempDir()),
			Microphone: "gst:filesrc blocksize=1280 location=" + micIn + " ! rawaudioparse format=pcm pcm-format=f32le sample-rate=16000 num-channels=2",
			Speaker:    "gst:" + audioCaps + " ! filesink sync=true buffer-mode=unbuffered location=" + spkOut})
		sock := filepath.Join(b.TempDir(), "media.sock")
		srv, err := ListenSocket(m, sock, SocketOptions{}, m.log)
		if err != nil {
			b.Fatal(err)
		}
		audio, err := DialSocket(sock, "audio")
		if err != nil {
			b.Fatal(err)
		}
		play, err := DialSocket(sock, "play")
		if err != nil {
			b.Fatal(err)
		}
		// The microphone: 10 ms chunks in real time, a click (0.9) every 20th.
		clicks := make(chan time.Time, 100)
		stop := make(chan struct{})
		go func() {
			f, err := os.OpenFile(micIn, os.O_WRONLY, 0)
			if err != nil {
				b.Error(err)
				return
			}
			defer f.Close()
			chunk := make([]float32, chunkFrames*Channels)
			t := time.NewTicker(10 * time.Millisecond)
			defer t.Stop()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-t.C:
				}
				v := float32(0)
				if i%20 == 0 {
					v = 0.9
				}
				for j := range chunk {
					chunk[j] = v
				}
				if v != 0 {
					clicks <- time.Now()
				}
				if _, err := f.Write(floatBytes(chunk)); err != nil {
					return
				}
			}
		}()
		// The speaker's sink: find the app's clicks in what it renders.
		heard := make(chan time.Time, 100)
		go func() {
			f, err := os.Open(spkOut)
			if err != nil {
				b.Error(err)
				return
			}
			defer f.Close()
			buf := make([]byte, 4)
			loud := false
			for {
				if _, err := io.ReadFull(f, buf); err != nil {
					return
				}
				v := math.Float32frombits(binary.LittleEndian.Uint32(buf))
				if v > 0.5 && !loud {
					heard <- time.Now()
				}
				loud = v > 0.5
			}
		}()
		var capture, playback []time.Duration
		inClick := false
		for len(capture) < 50 {
			ch, err := audio.Chunk()
			if err != nil {
				b.Fatal(err)
			}
			loud := ch.Samples[0] > 0.5
			if loud && !inClick {
				capture = append(capture, time.Since(<-clicks))
				// The app answers with a click of its own on the speaker.
				click := make([]float32, chunkFrames*Channels)
				for i := range click {
					click[i] = 0.9
				}
				sent := time.Now()
				if err := play.Play(click); err != nil {
					b.Fatal(err)
				}
				select {
				case at := <-heard:
					playback = append(playback, at.Sub(sent))
				case <-time.After(5 * time.Second):
					b.Fatal("the click never reached the speaker's sink")
				}
			}
			inClick = loud
		}
		close(stop)
		audio.Close()
		play.Close()
		srv.Close()
		m.Close()
		percentiles(b, capture[5:], "capture")
		percentiles(b, playback[5:], "playback")
	}
}

func needGstB(b *testing.B) {
	b.Helper()
	if _, err := os.Stat("/usr/bin/" + GstLaunch); err != nil {
		b.Skip("GStreamer is not installed")
	}
}
