package robot

import (
	"image"
	"image/color"
	"image/draw"
	"math"
	"time"

	"github.com/robothub/robothub/core/fault"
)

// Camera is implemented by backends that have a camera, and by Media.
type Camera interface {
	// CameraSpecs describes the camera.
	CameraSpecs() CameraSpecs
	// Frame captures an image at now; nil when the camera gives none.
	Frame(now time.Time) *image.RGBA
}

// CameraSpecs implements Camera for the simulation.
func (s *Sim) CameraSpecs() CameraSpecs { return SimCameraSpecs }

// Frame implements Camera: the simulation's camera shows a test pattern, eight colour bars with a
// white square that crosses the image once every two seconds and a grey band whose height follows
// the head's pitch, so that a frame tells when it was taken and where the head looked.
func (s *Sim) Frame(now time.Time) *image.RGBA {
	w, h := SimCameraSpecs.Width, SimCameraSpecs.Height
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	fill := func(r image.Rectangle, c color.RGBA) { draw.Draw(img, r, image.NewUniform(c), image.Point{}, draw.Src) }
	bars := []color.RGBA{
		{255, 255, 255, 255}, {255, 255, 0, 255}, {0, 255, 255, 255}, {0, 255, 0, 255},
		{255, 0, 255, 255}, {255, 0, 0, 255}, {0, 0, 255, 255}, {0, 0, 0, 255},
	}
	for i, c := range bars {
		fill(image.Rect(i*w/len(bars), 0, (i+1)*w/len(bars), h), c) // w is a multiple of len(bars)
	}
	s.mu.Lock()
	pitch := s.present.Head.Pitch
	s.mu.Unlock()
	band := h/2 + int(math.Round(pitch/0.7*float64(h/2-20)))
	fill(image.Rect(0, band-10, w, band+10), color.RGBA{128, 128, 128, 255}) // draw clips it to the image
	phase := float64(now.UnixNano()%int64(2*time.Second)) / float64(2*time.Second)
	x0 := int(phase * float64(w-40))
	fill(image.Rect(x0, h-60, x0+40, h-20), color.RGBA{255, 255, 255, 255})
	return img
}

// camera is the robot's camera: its media's, else its backend's.
func (r *Robot) camera() (Camera, bool) {
	r.mu.Lock()
	m := r.media
	r.mu.Unlock()
	if m != nil {
		return m, true
	}
	c, ok := r.backend.(Camera)
	return c, ok
}

// CameraFrame captures an image from the robot's camera.
func (r *Robot) CameraFrame() (*image.RGBA, error) {
	c, ok := r.camera()
	if !ok {
		return nil, fault.Refusedf("the %s backend has no camera", r.backend.Name())
	}
	img := c.Frame(time.Now())
	if img == nil {
		return nil, fault.Unavailablef("the camera gives no image")
	}
	return img, nil
}

// CameraSpecs describes the robot's camera.
func (r *Robot) CameraSpecs() (CameraSpecs, error) {
	c, ok := r.camera()
	if !ok {
		return CameraSpecs{}, fault.Refusedf("the %s backend has no camera", r.backend.Name())
	}
	return c.CameraSpecs(), nil
}

// LookAtImage returns the head pose that looks at pixel (u, v) of the camera's image, from the
// present head pose.
func (r *Robot) LookAtImage(u, v float64) (HeadPose, error) {
	specs, err := r.CameraSpecs()
	if err != nil {
		return HeadPose{}, err
	}
	return LookAtImage(specs, u, v, r.State().HeadPose)
}
