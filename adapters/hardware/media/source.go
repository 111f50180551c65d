package media

import (
	"fmt"
	"strings"
)

// Device names, as --camera, --microphone and --speaker take them:
//
//	""          the robot's own device, found by its USB id (Discover)
//	none        no such device: its calls answer that it is off
//	sim         (camera) the simulated robot's camera, drawn by the daemon
//	loopback    (microphone) hears what the speaker plays; (speaker) plays to that microphone in
//	            real time: the simulated robot's sound, with no sound card at all
//	test        GStreamer's test sources and a clocked fakesink: videotestsrc (a moving ball),
//	            audiotestsrc (red noise), through the same pipelines and code as a device
//	/dev/videoN a V4L2 camera; libcamera: the Pi camera (the Wireless)
//	hw:..., plughw:..., default   an ALSA device (gstreamer1.0-alsa)
//	pulse, pulse:NAME            PulseAudio or PipeWire's pulse server, its default or NAME
//	file:PATH   (speaker) a WAV file the speaker writes in real time
//	gst:DESC    any GStreamer description: the source (or, for the speaker, the sink) part of the
//	            pipeline; the daemon adds the conversion to its own format
const (
	DeviceAuto     = ""
	DeviceNone     = "none"
	DeviceSim      = "sim"
	DeviceLoopback = "loopback"
	DeviceTest     = "test"
)

// VideoMode is the size and rate frames are captured at.
type VideoMode struct{ Width, Height, FPS int }

// DefaultVideoMode is what apps get unless the daemon is told otherwise: the public daemon's IPC
// frames are the camera's size; ours default to 640x480 at 30 fps, which apps' vision models take
// without resizing and which 2 Pi cores capture in a few percent of one core.
var DefaultVideoMode = VideoMode{640, 480, 30}

func (m VideoMode) frameBytes() int { return m.Width * m.Height * 3 }

func (m VideoMode) String() string { return fmt.Sprintf("%dx%d@%d", m.Width, m.Height, m.FPS) }

// ParseVideoMode reads WIDTHxHEIGHT@FPS.
func ParseVideoMode(s string) (VideoMode, error) {
	var m VideoMode
	if _, err := fmt.Sscanf(s, "%dx%d@%d", &m.Width, &m.Height, &m.FPS); err != nil ||
		m.Width < 16 || m.Height < 16 || m.Width > 4096 || m.Height > 4096 || m.FPS < 1 || m.FPS > 120 ||
		fmt.Sprintf("%dx%d@%d", m.Width, m.Height, m.FPS) != s {
		return m, fmt.Errorf("%q is not WIDTHxHEIGHT@FPS (16 to 4096 pixels, 1 to 120 fps), e.g. 640x480@30", s)
	}
	if m.Width%2 != 0 || m.Height%2 != 0 {
		return m, fmt.Errorf("%q: width and height must be even (video encoders need it)", s)
	}
	return m, nil
}

// audioCaps is the one audio format between the daemon and its pipelines.
var audioCaps = fmt.Sprintf("audio/x-raw,format=F32LE,rate=%d,channels=%d,layout=interleaved", SampleRate, Channels)

// cameraPipeline is the gst-launch description that captures device in mode as BGR frames on fd 3.
func cameraPipeline(device string, mode VideoMode) (string, error) {
	raw := fmt.Sprintf("video/x-raw,format=BGR,width=%d,height=%d,framerate=%d/1", mode.Width, mode.Height, mode.FPS)
	sink := "fdsink fd=3 sync=false"
	var src string
	switch {
	case device == DeviceTest:
		src = fmt.Sprintf("videotestsrc is-live=true pattern=ball ! video/x-raw,width=%d,height=%d,framerate=%d/1", mode.Width, mode.Height, mode.FPS)
	case device == "libcamera":
		src = fmt.Sprintf("libcamerasrc ! video/x-raw,width=%d,height=%d,framerate=%d/1", mode.Width, mode.Height, mode.FPS)
	case strings.HasPrefix(device, "/dev/"):
		// UVC cameras give MJPEG at their large sizes: decodebin picks the decoder, videorate
		// drops what the app does not ask for.
		src = "v4l2src device=" + quote(device) + " ! decodebin"
	case strings.HasPrefix(device, "gst:"):
		src = strings.TrimPrefix(device, "gst:")
	default:
		return "", fmt.Errorf("camera %q is not /dev/videoN, libcamera, test, sim, none or gst:DESCRIPTION", device)
	}
	return src + " ! videoconvert ! videoscale ! videorate drop-only=true ! " + raw + " ! " + sink, nil
}

// microphonePipeline captures device as audioCaps on fd 3, in chunks of chunkFrames frames.
func microphonePipeline(device string) (string, error) {
	var src string
	switch {
	case device == DeviceTest:
		src = fmt.Sprintf("audiotestsrc is-live=true wave=red-noise volume=0.3 samplesperbuffer=%d", chunkFrames)
	case device == "pulse":
		src = "pulsesrc"
	case strings.HasPrefix(device, "pulse:"):
		src = "pulsesrc device=" + quote(strings.TrimPrefix(device, "pulse:"))
	case isALSA(device):
		// 40 ms of buffer in 10 ms periods: what the app hears is at most a few periods old.
		src = "alsasrc device=" + quote(device) + " buffer-time=40000 latency-time=10000"
	case strings.HasPrefix(device, "gst:"):
		src = strings.TrimPrefix(device, "gst:")
	default:
		return "", fmt.Errorf("microphone %q is not an ALSA device (hw:CARD=NAME), pulse, pulse:NAME, test, loopback, none or gst:DESCRIPTION", device)
	}
	return src + " ! audioconvert ! audioresample ! " + audioCaps + " ! fdsink fd=3 sync=false", nil
}

// speakerPipeline plays audioCaps read from fd 3 on device.
func speakerPipeline(device string) (string, error) {
	var sink string
	switch {
	case device == DeviceTest:
		sink = "fakesink sync=true"
	case device == "pulse":
		sink = "pulsesink"
	case strings.HasPrefix(device, "pulse:"):
		sink = "pulsesink device=" + quote(strings.TrimPrefix(device, "pulse:"))
	case isALSA(device):
		sink = "alsasink device=" + quote(device) + " buffer-time=40000 latency-time=10000"
	case strings.HasPrefix(device, "file:"):
		sink = "wavenc ! filesink sync=true location=" + quote(strings.TrimPrefix(device, "file:"))
	case strings.HasPrefix(device, "gst:"):
		sink = strings.TrimPrefix(device, "gst:")
	default:
		return "", fmt.Errorf("speaker %q is not an ALSA device (hw:CARD=NAME), pulse, pulse:NAME, test, file:PATH, loopback, none or gst:DESCRIPTION", device)
	}
	parse := fmt.Sprintf("fdsrc fd=3 blocksize=%d ! rawaudioparse use-sink-caps=false format=pcm pcm-format=f32le sample-rate=%d num-channels=%d", chunkBytes, SampleRate, Channels)
	return parse + " ! audioconvert ! audioresample ! " + sink, nil
}

func isALSA(device string) bool {
	return device == "default" || strings.HasPrefix(device, "hw:") || strings.HasPrefix(device, "plughw:") ||
		strings.HasPrefix(device, "sysdefault") || strings.HasPrefix(device, "dsnoop") || strings.HasPrefix(device, "dmix")
}
