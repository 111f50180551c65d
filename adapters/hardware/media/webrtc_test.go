package media

import (
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/wait"

	"github.com/pion/rtp/codecs"
	"github.com/pion/webrtc/v4"
)

// peer is a Go WebRTC client on loopback, as a program off the robot would be.
type peer struct {
	pc     *webrtc.PeerConnection
	tracks chan *webrtc.TrackRemote
	levels chan float64
}

func newPeer(t testing.TB) *peer {
	t.Helper()
	var se webrtc.SettingEngine
	se.SetIncludeLoopbackCandidate(true)
	se.SetIPFilter(func(ip net.IP) bool { return ip.IsLoopback() })
	api := webrtc.NewAPI(webrtc.WithSettingEngine(se))
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	p := &peer{pc: pc, tracks: make(chan *webrtc.TrackRemote, 2), levels: make(chan float64, 100)}
	for _, kind := range []webrtc.RTPCodecType{webrtc.RTPCodecTypeVideo, webrtc.RTPCodecTypeAudio} {
		if _, err := pc.AddTransceiverFromKind(kind, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionRecvonly}); err != nil {
			t.Fatal(err)
		}
	}
	dc, err := pc.CreateDataChannel("robot", nil)
	if err != nil {
		t.Fatal(err)
	}
	dc.OnMessage(func(m webrtc.DataChannelMessage) {
		var v struct{ Level float64 }
		if json.Unmarshal(m.Data, &v) == nil {
			select {
			case p.levels <- v.Level:
			default:
			}
		}
	})
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) { p.tracks <- tr })
	return p
}

// connect makes the peer's offer, has w answer it, and returns the answer it set.
func (p *peer) connect(t testing.TB, w *WebRTC) *webrtc.SessionDescription {
	t.Helper()
	offer, err := p.pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	gathered := webrtc.GatheringCompletePromise(p.pc)
	if err := p.pc.SetLocalDescription(offer); err != nil {
		t.Fatal(err)
	}
	<-gathered
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	answer, err := w.Answer(ctx, *p.pc.LocalDescription())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.pc.SetRemoteDescription(*answer); err != nil {
		t.Fatal(err)
	}
	return answer
}

func TestWebRTCPeerGetsCameraMicrophonesAndLevels(t *testing.T) {
	needGst(t)
	m := openTest(t, Options{Camera: DeviceTest, Microphone: DeviceTest, Speaker: DeviceNone, Mode: VideoMode{320, 240, 30}})
	w, err := NewWebRTC(m, true, m.log)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	p := newPeer(t)
	p.connect(t, w)

	kinds := map[string]bool{}
	keyframe := make(chan struct{})
	opus := make(chan struct{})
	for len(kinds) < 2 {
		select {
		case tr := <-p.tracks:
			kinds[tr.Kind().String()] = true
			go func() {
				seenKey := false
				for {
					pkt, _, err := tr.ReadRTP()
					if err != nil {
						return
					}
					switch tr.Codec().MimeType {
					case webrtc.MimeTypeVP8:
						var vp8 codecs.VP8Packet
						if _, err := vp8.Unmarshal(pkt.Payload); err == nil && vp8.S == 1 && len(vp8.Payload) > 0 && vp8.Payload[0]&1 == 0 && !seenKey {
							seenKey = true
							close(keyframe)
						}
					case webrtc.MimeTypeOpus:
						if len(pkt.Payload) > 0 {
							close(opus)
							return
						}
					}
				}
			}()
		case <-time.After(15 * time.Second):
			t.Fatalf("tracks received: %v; want video and audio", kinds)
		}
	}
	for what, ch := range map[string]chan struct{}{"a VP8 keyframe": keyframe, "Opus audio": opus} {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s reached the peer", what)
		}
	}
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l := <-p.levels:
			if l > 0.01 {
				if n := w.Peers(); n != 1 {
					t.Fatalf("%d peers connected, want 1", n)
				}
				p.pc.Close()
				wait.For(t, 10*time.Second, "the peer to be gone", func() bool { return w.Peers() == 0 })
				return
			}
		case <-deadline:
			t.Fatal("the data channel never carried a live microphone level")
		}
	}
}

func TestWebRTCRefusesWhileReleased(t *testing.T) {
	m := openTest(t, Options{Camera: DeviceNone, Microphone: DeviceLoopback, Speaker: DeviceLoopback})
	w, err := NewWebRTC(m, true, m.log)
	if err != nil {
		t.Fatal(err)
	}
	m.Release()
	p := newPeer(t)
	offer, _ := p.pc.CreateOffer(nil)
	if _, err := w.Answer(context.Background(), offer); err != ErrReleased {
		t.Fatalf("an offer while released: %v", err)
	}
	if _, err := w.Answer(context.Background(), webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: offer.SDP}); err == nil {
		t.Fatal("an answer taken for an offer")
	}
}

// A robot without a camera answers the video a peer asks for "inactive", so that the peer (a
// browser, the SDK) knows at once that no picture will come, instead of waiting for one.
func TestWebRTCAnswerSaysWhatTheRobotDoesNotSend(t *testing.T) {
	m := openTest(t, Options{Camera: DeviceNone, Microphone: DeviceLoopback, Speaker: DeviceLoopback})
	w, err := NewWebRTC(m, true, m.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	p := newPeer(t)
	// The answer as the daemon gave it: pion's RemoteDescription() races with the goroutine that
	// SetRemoteDescription starts (go test -race).
	answer, err := p.connect(t, w).Unmarshal()
	if err != nil {
		t.Fatal(err)
	}
	directions := map[string]string{}
	for _, md := range answer.MediaDescriptions {
		for _, d := range []string{"sendonly", "recvonly", "sendrecv", "inactive"} {
			if _, ok := md.Attribute(d); ok {
				directions[md.MediaName.Media] = d
			}
		}
	}
	if directions["video"] != "inactive" || directions["audio"] != "sendonly" {
		t.Fatalf("the daemon's answer: video %q, audio %q; want inactive, sendonly", directions["video"], directions["audio"])
	}
}
