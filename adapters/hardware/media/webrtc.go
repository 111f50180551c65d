package media

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/pion/webrtc/v4"
)

// WebRTC serves the camera and the microphones to WebRTC peers: the dashboard in a browser, and
// programs off the robot. Signalling is one offer and one answer through the daemon's
// authenticated API (no trickle: the answer carries every candidate). Pion does the WebRTC; the
// encoding is GStreamer's, in a subprocess per stream that runs while at least one peer watches:
// raw frames in (fd 3), VP8 RTP packets out (rtpstreampay on fd 4), and the same for Opus.
// Every peer shares the two tracks, so one encoder serves them all.
type WebRTC struct {
	media        *Media
	api          *webrtc.API
	log          *slog.Logger
	video, audio *webrtc.TrackLocalStaticRTP

	mu      sync.Mutex
	peers   map[*webrtc.PeerConnection]struct{}
	streams context.CancelFunc // the encoders', while peers watch
	running sync.WaitGroup
}

// Keyframes come at least every keyframeEvery frames, so a peer that joins sees a picture within
// a second at 30 fps (gst-launch takes no keyframe request from outside).
const keyframeEvery = 30

// NewWebRTC prepares WebRTC for m. With loopbackOnly (a daemon listening on loopback only), only
// loopback addresses are offered to peers.
func NewWebRTC(m *Media, loopbackOnly bool, log *slog.Logger) (*WebRTC, error) {
	var se webrtc.SettingEngine
	if loopbackOnly {
		se.SetIncludeLoopbackCandidate(true)
		se.SetIPFilter(func(ip net.IP) bool { return ip.IsLoopback() })
	}
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4, webrtc.NetworkTypeUDP6})
	var me webrtc.MediaEngine
	if err := me.RegisterDefaultCodecs(); err != nil {
		return nil, err
	}
	video, err := webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}, "camera", "robot")
	if err != nil {
		return nil, err
	}
	audio, err := webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}, "microphones", "robot")
	if err != nil {
		return nil, err
	}
	return &WebRTC{media: m, log: log, video: video, audio: audio, peers: map[*webrtc.PeerConnection]struct{}{},
		api: webrtc.NewAPI(webrtc.WithSettingEngine(se), webrtc.WithMediaEngine(&me))}, nil
}

// Answer takes a peer's offer and returns the daemon's answer. The peer receives the camera and
// the microphones (as far as the robot has them), and on a data channel it opens, the
// microphones' level ten times a second as {"level": rms}.
func (w *WebRTC) Answer(ctx context.Context, offer webrtc.SessionDescription) (*webrtc.SessionDescription, error) {
	if offer.Type != webrtc.SDPTypeOffer {
		return nil, fmt.Errorf("type: %q is not an offer", offer.Type.String())
	}
	st := w.media.Status()
	if st.Released {
		return nil, ErrReleased
	}
	pc, err := w.api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*webrtc.SessionDescription, error) {
		pc.Close()
		return nil, err
	}
	if w.media.HasCamera() {
		if _, err := pc.AddTrack(w.video); err != nil {
			return fail(err)
		}
	}
	if st.Microphone.Error == "" {
		if _, err := pc.AddTrack(w.audio); err != nil {
			return fail(err)
		}
	}
	pc.OnDataChannel(func(dc *webrtc.DataChannel) { dc.OnOpen(func() { go w.sendLevels(dc) }) })
	pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		w.log.Debug("webrtc peer", "state", s.String())
		switch s {
		case webrtc.PeerConnectionStateConnected:
			w.join(pc)
		case webrtc.PeerConnectionStateFailed, webrtc.PeerConnectionStateClosed, webrtc.PeerConnectionStateDisconnected:
			w.leave(pc)
			if s != webrtc.PeerConnectionStateClosed {
				pc.Close()
			}
		}
	})
	if err := pc.SetRemoteDescription(offer); err != nil {
		return fail(fmt.Errorf("sdp: %w", err))
	}
	// Pion answers a kind it has no track for (no camera, or no microphones) "sendonly" and then
	// sends nothing; stopped, the answer tells the peer the robot sends none of it.
	for _, tr := range pc.GetTransceivers() {
		if tr.Sender() == nil && tr.Direction() == webrtc.RTPTransceiverDirectionSendonly {
			if err := tr.Stop(); err != nil {
				return fail(err)
			}
		}
	}
	answer, err := pc.CreateAnswer(nil)
	if err != nil {
		return fail(fmt.Errorf("sdp: %w", err))
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(answer); err != nil {
		return fail(err)
	}
	select {
	case <-gathered:
	case <-ctx.Done():
		return fail(fmt.Errorf("gathering candidates: %w", ctx.Err()))
	}
	return pc.LocalDescription(), nil
}

// Peers is how many peers are connected.
func (w *WebRTC) Peers() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.peers)
}

// Close hangs up every peer and stops the encoders.
func (w *WebRTC) Close() {
	w.mu.Lock()
	peers := make([]*webrtc.PeerConnection, 0, len(w.peers))
	for pc := range w.peers {
		peers = append(peers, pc)
	}
	w.mu.Unlock()
	for _, pc := range peers {
		pc.Close()
		w.leave(pc)
	}
	w.running.Wait()
}

func (w *WebRTC) join(pc *webrtc.PeerConnection) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.peers[pc] = struct{}{}
	if w.streams != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.streams = cancel
	if w.media.HasCamera() {
		w.running.Add(1)
		go func() {
			defer w.running.Done()
			retry(ctx, w.log, "webrtc video encoder", func(error) {}, w.encodeVideo)
		}()
	}
	if w.media.mic != nil {
		w.running.Add(1)
		go func() {
			defer w.running.Done()
			retry(ctx, w.log, "webrtc audio encoder", func(error) {}, w.encodeAudio)
		}()
	}
}

func (w *WebRTC) leave(pc *webrtc.PeerConnection) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.peers[pc]; !ok {
		return
	}
	delete(w.peers, pc)
	if len(w.peers) == 0 && w.streams != nil {
		w.streams()
		w.streams = nil
	}
}

func (w *WebRTC) encodeVideo(ctx context.Context) error {
	frames, stop, err := w.media.Frames()
	if err != nil {
		return err
	}
	defer stop()
	mode := w.media.Mode()
	desc := fmt.Sprintf("fdsrc fd=3 blocksize=%d ! rawvideoparse width=%d height=%d format=bgr framerate=%d/1 ! videoconvert ! video/x-raw,format=I420 ! "+
		"vp8enc deadline=1 cpu-used=8 threads=2 lag-in-frames=0 error-resilient=partitions target-bitrate=1500000 keyframe-max-dist=%d ! "+
		"rtpvp8pay pt=96 mtu=1200 picture-id-mode=15-bit ! rtpstreampay ! fdsink fd=4 sync=false",
		mode.frameBytes(), mode.Width, mode.Height, mode.FPS, keyframeEvery)
	return w.encode(ctx, desc, w.video, func(p *process) error {
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case f, ok := <-frames:
				if !ok {
					return errors.New("the camera stopped")
				}
				if len(f.BGR) != mode.frameBytes() {
					continue // a drawn camera of another size: not this encoder's
				}
				if _, err := p.data.Write(f.BGR); err != nil {
					return err
				}
			}
		}
	})
}

func (w *WebRTC) encodeAudio(ctx context.Context) error {
	chunks, stop, err := w.media.Chunks()
	if err != nil {
		return err
	}
	defer stop()
	desc := fmt.Sprintf("fdsrc fd=3 blocksize=%d ! rawaudioparse use-sink-caps=false format=pcm pcm-format=f32le sample-rate=%d num-channels=%d ! "+
		"audioconvert ! audioresample ! audio/x-raw,rate=48000 ! opusenc frame-size=20 bitrate=64000 ! rtpopuspay pt=111 ! rtpstreampay ! fdsink fd=4 sync=false",
		chunkBytes, SampleRate, Channels)
	return w.encode(ctx, desc, w.audio, func(p *process) error {
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case c, ok := <-chunks:
				if !ok {
					return errors.New("the microphones stopped")
				}
				if _, err := p.data.Write(floatBytes(c.Samples)); err != nil {
					return err
				}
			}
		}
	})
}

// encode runs an encoder pipeline: feed writes its input; its RTP packets go to track.
func (w *WebRTC) encode(ctx context.Context, desc string, track *webrtc.TrackLocalStaticRTP, feed func(*process) error) error {
	p, err := startGstFilter(desc, w.log)
	if err != nil {
		return err
	}
	defer p.stopWith(ctx)()
	fed := make(chan error, 1)
	go func() {
		err := feed(p)
		fed <- err
		p.stop() // the input ended: so does the pipeline, and the read below
	}()
	r := bufio.NewReaderSize(p.out, 1<<16)
	var size [2]byte
	buf := make([]byte, 1<<16)
	for {
		if _, err := io.ReadFull(r, size[:]); err != nil {
			break
		}
		n := int(binary.BigEndian.Uint16(size[:]))
		if _, err := io.ReadFull(r, buf[:n]); err != nil {
			break
		}
		if _, err := track.Write(buf[:n]); err != nil && !errors.Is(err, io.ErrClosedPipe) {
			w.log.Debug("webrtc track", "err", err)
		}
	}
	p.stop()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	select {
	case err := <-fed:
		if err != nil {
			return err
		}
	case <-time.After(time.Second):
	}
	return p.failure()
}

// sendLevels sends the microphones' level on dc ten times a second until it closes.
func (w *WebRTC) sendLevels(dc *webrtc.DataChannel) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for range t.C {
		if dc.ReadyState() != webrtc.DataChannelStateOpen {
			return
		}
		level, err := w.media.Level()
		msg := fmt.Sprintf(`{"level":%.4f}`, level)
		if err != nil {
			msg = fmt.Sprintf(`{"level":0,"error":%q}`, err.Error())
		}
		if err := dc.SendText(msg); err != nil {
			return
		}
	}
}
