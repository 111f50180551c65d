package robot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"time"

	"github.com/robothub/robothub/core/fault"
)

// MaxPushSamples bounds one PushAudio call: 10 seconds of stereo audio.
const MaxPushSamples = 10 * SampleRate * Channels

// maxSoundFileBytes bounds the size of a sound file PlaySound reads.
const maxSoundFileBytes = 64 << 20

// wavHeaderBytes is the shortest WAV file: "RIFF", its size, "WAVE".
const wavHeaderBytes = 12

// StartRecording starts keeping what the microphone hears, dropping anything recorded before.
func (r *Robot) StartRecording() {
	r.mu.Lock()
	r.recording = true
	r.recorded = r.recorded[:0]
	r.mu.Unlock()
}

// StopRecording stops recording and drops what was not read.
func (r *Robot) StopRecording() {
	r.mu.Lock()
	r.recording = false
	r.recorded = nil
	r.mu.Unlock()
}

// AudioSample returns, and removes from the recording, up to max recorded frames (all of them
// when max <= 0) as interleaved stereo samples. At most the last 30 seconds are kept.
func (r *Robot) AudioSample(max int) ([]float32, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.recording {
		return nil, fault.Refusedf("recording is not started: call start_recording first")
	}
	n := len(r.recorded)
	if max > 0 && max*Channels < n {
		n = max * Channels
	}
	out := append([]float32{}, r.recorded[:n]...)
	r.recorded = append(r.recorded[:0], r.recorded[n:]...)
	return out, nil
}

// PushAudio queues interleaved stereo samples on the speaker. Samples must be finite; they are
// clipped to [-1, 1].
func (r *Robot) PushAudio(samples []float32) error {
	if len(samples) > MaxPushSamples {
		return fault.Invalidf("samples: at most %d frames (10 s) per push, got %d", MaxPushSamples/Channels, len(samples)/Channels)
	}
	if len(samples)%Channels != 0 {
		return fault.Invalidf("samples: %d values is not a whole number of stereo frames", len(samples))
	}
	clipped := make([]float32, len(samples))
	for i, s := range samples {
		if f := float64(s); math.IsNaN(f) || math.IsInf(f, 0) {
			return fault.Invalidf("samples[%d] must be a finite number", i)
		}
		clipped[i] = max(-1, min(1, s))
	}
	r.speak(clipped)
	return nil
}

// speak plays samples and returns how long they last.
func (r *Robot) speak(samples []float32) time.Duration {
	r.mu.Lock()
	if r.media != nil {
		r.media.Speak(samples)
	} else {
		r.backend.Speak(samples)
	}
	r.scheduleWobble(samples, time.Now())
	r.mu.Unlock()
	return time.Duration(len(samples)/Channels) * time.Second / SampleRate
}

// PlaySound plays a WAV file (PCM 8/16/24/32-bit or IEEE float, any channel count and rate) found
// at path on the robot, or a built-in sound named as a bare file name (wake_up.wav, go_sleep.wav,
// as apps written for the anchor play them), and returns its duration.
func (r *Robot) PlaySound(path string) (time.Duration, error) {
	if path == "" {
		return 0, fault.Invalidf("file: a path to a .wav file is required")
	}
	if samples, ok := builtinSound(path); ok {
		return r.speak(samples), nil
	}
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fault.NotFoundf("sound file %s does not exist", path)
	}
	if err != nil {
		return 0, fault.Refusedf("sound file %s cannot be read: %v", path, err)
	}
	if !info.Mode().IsRegular() || info.Size() > maxSoundFileBytes {
		return 0, fault.Invalidf("sound file %s is not a regular file of at most 64 MiB", path)
	}
	// Files of /proc and other kernel filesystems show a size of 0, and some block their reader
	// (/proc/kmsg waits for kernel messages): a file too short for a WAV header is refused unread.
	if info.Size() < wavHeaderBytes {
		return 0, fault.Invalidf("sound file %s: not a RIFF/WAVE file (%d bytes)", path, info.Size())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fault.Refusedf("sound file %s cannot be read: %v", path, err)
	}
	samples, err := DecodeWAV(data)
	if err != nil {
		return 0, fault.Invalidf("sound file %s: %v", path, err)
	}
	return r.speak(samples), nil
}

// DecodeWAV decodes a RIFF/WAVE file to interleaved stereo samples at SampleRate: a mono file
// plays on both channels, a file of more than two channels gives its first two.
func DecodeWAV(data []byte) ([]float32, error) {
	if len(data) < wavHeaderBytes || string(data[0:4]) != "RIFF" || string(data[8:12]) != "WAVE" {
		return nil, errors.New("not a RIFF/WAVE file")
	}
	var (
		format, channels, bits uint16
		rate                   uint32
		pcm                    []byte
		haveFmt                bool
	)
	for off := 12; off+8 <= len(data); {
		id, size := string(data[off:off+4]), int(binary.LittleEndian.Uint32(data[off+4:off+8]))
		size = min(size, len(data)-off-8) // tolerate a truncated last chunk
		body := data[off+8 : off+8+size]
		switch id {
		case "fmt ":
			if size < 16 {
				return nil, errors.New("fmt chunk too short")
			}
			format = binary.LittleEndian.Uint16(body[0:2])
			channels = binary.LittleEndian.Uint16(body[2:4])
			rate = binary.LittleEndian.Uint32(body[4:8])
			bits = binary.LittleEndian.Uint16(body[14:16])
			if format == 0xFFFE && size >= 26 { // WAVE_FORMAT_EXTENSIBLE: the subformat says which
				format = binary.LittleEndian.Uint16(body[24:26])
			}
			haveFmt = true
		case "data":
			pcm = body
		}
		off += 8 + size + size%2
	}
	if !haveFmt || pcm == nil {
		return nil, errors.New("missing fmt or data chunk")
	}
	if channels == 0 || rate == 0 || rate > 384000 {
		return nil, fmt.Errorf("unsupported channel count %d or sample rate %d", channels, rate)
	}
	decode, err := sampleDecoder(format, bits)
	if err != nil {
		return nil, err
	}
	width := int(bits / 8)
	frames := len(pcm) / (width * int(channels))
	var lr [Channels][]float64
	for c := range lr {
		lr[c] = make([]float64, frames)
		src := min(c, int(channels)-1)
		for i := range frames {
			o := (i*int(channels) + src) * width
			v := decode(pcm[o : o+width])
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("frame %d is not a finite number", i)
			}
			lr[c][i] = v
		}
	}
	left, right := resample(lr[0], float64(rate)), resample(lr[1], float64(rate))
	out := make([]float32, 0, len(left)*Channels)
	for i := range left {
		out = append(out, left[i], right[i])
	}
	return out, nil
}

func sampleDecoder(format, bits uint16) (func([]byte) float64, error) {
	switch {
	case format == 1 && bits == 8:
		return func(b []byte) float64 { return (float64(b[0]) - 128) / 128 }, nil
	case format == 1 && bits == 16:
		return func(b []byte) float64 { return float64(int16(binary.LittleEndian.Uint16(b))) / 32768 }, nil
	case format == 1 && bits == 24:
		return func(b []byte) float64 {
			v := int32(uint32(b[0])<<8|uint32(b[1])<<16|uint32(b[2])<<24) >> 8
			return float64(v) / (1 << 23)
		}, nil
	case format == 1 && bits == 32:
		return func(b []byte) float64 { return float64(int32(binary.LittleEndian.Uint32(b))) / (1 << 31) }, nil
	case format == 3 && bits == 32:
		return func(b []byte) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))) }, nil
	case format == 3 && bits == 64:
		return func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) }, nil
	}
	return nil, fmt.Errorf("unsupported sample format %d with %d bits", format, bits)
}

// resample converts one channel's samples at rate to SampleRate by linear interpolation.
func resample(in []float64, rate float64) []float32 {
	if len(in) == 0 {
		return nil
	}
	n := int(float64(len(in)) * SampleRate / rate)
	out := make([]float32, n)
	step := rate / SampleRate
	for i := range out {
		pos := float64(i) * step
		j := int(pos)
		frac := pos - float64(j)
		v := in[j]
		if j+1 < len(in) {
			v += (in[j+1] - v) * frac
		}
		out[i] = float32(math.Max(-1, math.Min(1, v)))
	}
	return out
}
