// Package media is the robot's camera, microphones and speaker: GStreamer pipelines run by
// gst-launch-1.0 in subprocesses, the devices found by their USB ids, and the paths that take
// frames and sound to apps (a unix socket on the robot, WebRTC through pion for everyone else).
//
// # Pipelines in a subprocess, not GStreamer bindings
//
// Go's GStreamer bindings (go-gst) are cgo: the daemon would need a C cross-toolchain and the
// target's GStreamer headers to build for the robot (linux/arm64), where today a plain
// CGO_ENABLED=0 GOARCH=arm64 go build makes it (16.4 MB stripped, with pion). A subprocess per
// device costs one pipe copy per frame instead of an appsink callback: BGR frames arrive on file
// descriptor 3 (fdsink fd=3), audio as raw float32 the same way, and the speaker reads fd 3
// (fdsrc). Measured on this project's 2-core machine (docs/BENCHMARKS.md, Robot media): a frame
// reaches an app 3.6 ms (p50) after it enters the pipeline, and the daemon with its pipelines
// uses 25% of one core for 640x480 at 30 fps, 16 kHz sound and the 50 Hz motor loop: the copy is
// not where the time goes. A pipeline that dies (the camera unplugged) is restarted with a growing
// pause while the motors go on, and it dies with the daemon (Pdeathsig).
//
// # Devices
//
// With no device named, Open finds the robot's own in sysfs: the camera by USB id (usbdev.CameraIDs;
// the Wireless's CSI camera through libcamera), the sound card by USB id (usbdev.AudioIDs) as an ALSA
// plughw device. Flags name others (--camera /dev/video2, --microphone pulse, --speaker
// hw:CARD=Device), as does the media section of the hardware config (Config, which also
// replaces the USB ids looked for); "test" runs GStreamer's test sources and a clocked fakesink
// through the same pipelines, "gst:..." any GStreamer description, "none" nothing. A device that
// is not found is an error naming the ids looked for and what was found, reported by Status and
// by each call that needs it; the daemon keeps driving the motors.
//
// # Who gets what
//
// The camera runs while someone looks (Frames, Frame) and stops Idle after the last one: a robot
// nobody looks through spends nothing on it. The microphone runs all the time and is kept for the
// robot's recorder (Listen) and its subscribers (Chunks); the speaker plays what Play queued, and
// silence, paced by the device's own clock (the write blocks while the card is busy), through a
// 4 KiB pipe, so a sound starts within a few tens of milliseconds of being queued. Volumes are
// gains applied here, so they work on every card and on none. Release closes every device for an
// app that opens them itself (release_media); Acquire opens them again.
package media
