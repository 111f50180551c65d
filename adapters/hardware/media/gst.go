package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/robothub/robothub/core/procgroup"
)

// GstLaunch is the program that runs pipelines: Debian's gstreamer1.0-tools.
const GstLaunch = "gst-launch-1.0"

// gstStopTimeout is how long a pipeline gets to end after SIGINT before it is killed.
const gstStopTimeout = 2 * time.Second

// process is one gst-launch-1.0 pipeline in a subprocess of its own group. Raw media cross the
// process boundary on pipes handed to it as file descriptor 3 (fdsink fd=3 for a capture,
// fdsrc fd=3 for playback): gst-launch prints its own messages on stdout, so stdout carries none.
type process struct {
	desc   string
	cmd    *exec.Cmd
	data   *os.File // our end of the fd 3 pipe: read for a capture, written for playback
	out    *os.File // a filter's output: our end of the fd 4 pipe, read
	stderr tail
	done   chan struct{}
	err    error // set before done closes
}

// startGst starts the pipeline desc. With playback, the pipeline reads fd 3 and the returned
// process's data is the write end; otherwise the pipeline writes fd 3 and data is the read end.
func startGst(desc string, playback bool, log *slog.Logger) (*process, error) {
	return startGstPipes(desc, playback, false, log)
}

// startGstFilter starts a pipeline that reads fd 3 (the process's data, written) and writes fd 4
// (its out, read): an encoder.
func startGstFilter(desc string, log *slog.Logger) (*process, error) {
	return startGstPipes(desc, true, true, log)
}

func startGstPipes(desc string, playback, filter bool, log *slog.Logger) (*process, error) {
	path, err := exec.LookPath(GstLaunch)
	if err != nil {
		return nil, fmt.Errorf("%s is not on PATH: install GStreamer (Debian: gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good)", GstLaunch)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	ours, theirs := r, w
	if playback {
		ours, theirs = w, r
		// A small pipe keeps what waits for the speaker short: 4 KiB is 32 ms of 16 kHz stereo float32.
		setPipeSize(w, 4096)
	}
	p := &process{desc: desc, data: ours, done: make(chan struct{})}
	extra := []*os.File{theirs}
	if filter {
		or, ow, err := os.Pipe()
		if err != nil {
			r.Close()
			w.Close()
			return nil, err
		}
		p.out = or
		extra = append(extra, ow)
		defer ow.Close()
	}
	// -q: no progress messages; -e: an interrupt ends the stream cleanly (a WAV file gets its sizes).
	p.cmd = exec.Command(path, append([]string{"-q", "-e"}, splitDescription(desc)...)...)
	p.cmd.ExtraFiles = extra
	p.cmd.Stdout = io.Discard
	p.cmd.Stderr = &p.stderr
	procgroup.Isolate(p.cmd)
	dieWithParent(p.cmd)
	if err := p.cmd.Start(); err != nil {
		r.Close()
		w.Close()
		if p.out != nil {
			p.out.Close()
		}
		return nil, fmt.Errorf("starting %s: %w", GstLaunch, err)
	}
	theirs.Close()
	log.Debug("pipeline started", "pid", p.cmd.Process.Pid, "pipeline", desc)
	go func() {
		err := p.cmd.Wait()
		if msg := p.stderr.String(); msg != "" {
			err = fmt.Errorf("%w: %s", cmp(err, errors.New("gst-launch-1.0 ended")), msg)
		} else if err == nil {
			err = io.EOF
		}
		p.err = err
		close(p.done)
	}()
	return p, nil
}

func cmp(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// stop ends the pipeline: SIGINT, then SIGKILL to its group after gstStopTimeout.
func (p *process) stop() {
	p.data.Close()
	if p.out != nil {
		defer p.out.Close()
	}
	select {
	case <-p.done:
		return
	default:
	}
	_ = procgroup.Signal(p.cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(gstStopTimeout):
		_ = procgroup.Kill(p.cmd.Process.Pid)
		<-p.done
	}
}

// stopWith stops the pipeline when ctx ends. The function it returns stops it now if it still
// runs and, either way, returns once the process has ended: a capture that returns has let go of
// its device (Release relies on it), even when ctx's stop is still under way.
func (p *process) stopWith(ctx context.Context) func() {
	unregister := context.AfterFunc(ctx, p.stop)
	return func() {
		unregister()
		p.stop()
	}
}

// failure explains why the pipeline ended, for a log or an error message.
func (p *process) failure() error {
	<-p.done
	if errors.Is(p.err, io.EOF) {
		return errors.New("the pipeline ended")
	}
	return p.err
}

// tail keeps the last bytes a process wrote to stderr, for error messages.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailBytes = 2048

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - tailBytes; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// quote makes s one value in a pipeline description: device names hold commas, colons and spaces.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// splitDescription splits a pipeline description into gst-launch's arguments: at spaces outside
// double quotes, quotes kept. gst-launch escapes the spaces inside each argument before it parses
// the whole, so a quoted value with spaces would otherwise be cut in two.
func splitDescription(desc string) []string {
	var args []string
	var cur strings.Builder
	quoted, escaped := false, false
	for _, r := range desc {
		switch {
		case escaped:
			escaped = false
		case r == '\\':
			escaped = true
		case r == '"':
			quoted = !quoted
		case (r == ' ' || r == '\t' || r == '\n') && !quoted:
			if cur.Len() > 0 {
				args = append(args, cur.String())
				cur.Reset()
			}
			continue
		}
		cur.WriteRune(r)
	}
	if cur.Len() > 0 {
		args = append(args, cur.String())
	}
	return args
}

// CheckElements reports the GStreamer elements of names that are not installed, naming the
// Debian package that brings each.
func CheckElements(ctx context.Context, names ...string) error {
	var missing []string
	for _, n := range names {
		if err := exec.CommandContext(ctx, "gst-inspect-1.0", "--exists", n).Run(); err != nil {
			missing = append(missing, n+" ("+elementPackage(n)+")")
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("GStreamer elements missing: %s", strings.Join(missing, ", "))
	}
	return nil
}

func elementPackage(name string) string {
	switch name {
	case "alsasrc", "alsasink":
		return "Debian: gstreamer1.0-alsa"
	case "libcamerasrc":
		return "Debian: gstreamer1.0-libcamera"
	case "pulsesrc", "pulsesink", "v4l2src", "vp8enc", "vp8dec", "jpegdec", "rtpvp8pay", "rtpopuspay", "rtpstreampay", "wavparse", "level":
		return "Debian: gstreamer1.0-plugins-good"
	}
	return "Debian: gstreamer1.0-plugins-base"
}
