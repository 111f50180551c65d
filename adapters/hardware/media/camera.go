package media

import (
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"log/slog"
	"sync"
	"time"
)

// camera captures frames while someone watches: an app, a WebRTC peer, the head tracker or an
// HTTP frame request. It starts on the first user and stops idle after the last one leaves, so a
// robot nobody looks through spends no CPU on its camera. A pipeline that fails (the camera
// unplugged) is restarted with a growing pause, and the error is kept for the status.
type camera struct {
	device string
	mode   VideoMode
	sim    func(time.Time) *image.RGBA
	idle   time.Duration
	log    *slog.Logger
	feed   *feed[Frame]

	mu       sync.Mutex
	users    int
	enabled  bool
	cancel   context.CancelFunc // the running capture's
	finished chan struct{}      // closed when the running capture has stopped
	idleStop *time.Timer

	errMu   sync.Mutex // apart from mu, which is held while a capture stops
	lastErr error
}

func newCamera(device string, mode VideoMode, sim func(time.Time) *image.RGBA, idle time.Duration, log *slog.Logger) *camera {
	return &camera{device: device, mode: mode, sim: sim, idle: idle, log: log, feed: newFeed[Frame](1, true), enabled: true}
}

// use counts a user in and starts the capture if needed; done counts it out.
func (c *camera) use() (done func(), err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.enabled {
		return nil, ErrReleased
	}
	c.users++
	if c.idleStop != nil {
		c.idleStop.Stop()
		c.idleStop = nil
	}
	if c.cancel == nil {
		c.startLocked()
	}
	var once sync.Once
	return func() { once.Do(c.leave) }, nil
}

func (c *camera) leave() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.users--
	if c.users == 0 && c.cancel != nil {
		c.idleStop = time.AfterFunc(c.idle, func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.users == 0 {
				c.stopLocked()
			}
		})
	}
}

func (c *camera) startLocked() {
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel, c.finished = cancel, make(chan struct{})
	go c.run(ctx, c.finished)
}

// stopLocked stops the capture; it returns once the device is closed.
func (c *camera) stopLocked() {
	if c.cancel == nil {
		return
	}
	c.cancel()
	<-c.finished
	c.cancel, c.finished = nil, nil
	c.feed.reset()
}

// setEnabled releases (false) or re-acquires (true) the device.
func (c *camera) setEnabled(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.enabled = on
	if !on {
		c.stopLocked()
	} else if c.users > 0 && c.cancel == nil {
		c.startLocked()
	}
}

func (c *camera) err() error {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	return c.lastErr
}

func (c *camera) setErr(err error) {
	c.errMu.Lock()
	c.lastErr = err
	c.errMu.Unlock()
}

func (c *camera) run(ctx context.Context, finished chan struct{}) {
	defer close(finished)
	if c.device == DeviceSim {
		c.runSim(ctx)
		return
	}
	retry(ctx, c.log, "camera "+c.device, c.setErr, c.capture)
}

// capture runs one pipeline until it fails or ctx ends.
func (c *camera) capture(ctx context.Context) error {
	desc, err := cameraPipeline(c.device, c.mode)
	if err != nil {
		return err
	}
	p, err := startGst(desc, false, c.log)
	if err != nil {
		return err
	}
	defer p.stopWith(ctx)()
	size := c.mode.frameBytes()
	var seq uint64
	for {
		buf := make([]byte, size)
		if _, err := io.ReadFull(p.data, buf); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("camera %s: %w", c.device, p.failure())
			}
			return fmt.Errorf("camera %s: reading frames: %w", c.device, err)
		}
		seq++
		if seq == 1 {
			c.setErr(nil)
			c.log.Info("camera capturing", "camera", c.device, "mode", c.mode.String())
		}
		c.feed.publish(Frame{Width: c.mode.Width, Height: c.mode.Height, BGR: buf, Captured: time.Now(), Seq: seq})
	}
}

// runSim draws the simulated robot's camera at the mode's rate.
func (c *camera) runSim(ctx context.Context) {
	t := time.NewTicker(time.Second / time.Duration(c.mode.FPS))
	defer t.Stop()
	var seq uint64
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			img := c.sim(now)
			seq++
			b := img.Bounds()
			c.feed.publish(Frame{Width: b.Dx(), Height: b.Dy(), BGR: RGBAToBGR(img), Captured: time.Now(), Seq: seq})
		}
	}
}

// RGBAToBGR converts an image to the BGR rows frames carry.
func RGBAToBGR(img *image.RGBA) []byte {
	b := img.Bounds()
	out := make([]byte, 0, b.Dx()*b.Dy()*3)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := img.Pix[(y-b.Min.Y)*img.Stride : (y-b.Min.Y)*img.Stride+4*b.Dx()]
		for x := 0; x < len(row); x += 4 {
			out = append(out, row[x+2], row[x+1], row[x])
		}
	}
	return out
}

// RGBA converts a frame to an image (what the head tracker and JPEG encoder take).
func (f Frame) RGBA() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, f.Width, f.Height))
	p := img.Pix
	for i, j := 0, 0; i+2 < len(f.BGR); i, j = i+3, j+4 {
		p[j], p[j+1], p[j+2], p[j+3] = f.BGR[i+2], f.BGR[i+1], f.BGR[i], 255
	}
	return img
}
