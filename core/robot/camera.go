package robot

import (
	"image"
	"image/color"
	"math"
	"time"

	"github.com/robothub/robothub/core/fault"
)

// Camera is implemented by backends that have a camera.
type Camera interface {
	// CameraSpecs describes the camera.
	CameraSpecs() CameraSpecs
	// Frame captures an image at now.
	Frame(now time.Time) *image.RGBA
}

// CameraSpecs implements Camera for the simulation.
func (s *Sim) CameraSpecs() CameraSpecs { return SimCameraSpecs }

// Frame implements Camera: the simulation's camera shows a test pattern, eight colour bars with a
// white square that crosses the image once every two seconds and a grey band whose height follows
// the head's pitch, so that a frame tells when it was taken and where the head looked.
func (s *Sim) Frame(now time.Time) *image.RGBA {
	specs := SimCameraSpecs
	img := image.NewRGBA(image.Rect(0, 0, specs.Width, specs.Height))
	bars := []color.RGBA{
		{255, 255, 255, 255}, {255, 255, 0, 255}, {0, 255, 255, 255}, {0, 255, 0, 255},
		{255, 0, 255, 255}, {255, 0, 0, 255}, {0, 0, 255, 255}, {0, 0, 0, 255},
	}
	for x := 0; x < specs.Width; x++ {
		c := bars[x*len(bars)/specs.Width]
		for y := 0; y < specs.Height; y++ {
			img.SetRGBA(x, y, c)
		}
	}
	s.mu.Lock()
	pitch := s.present.Head.Pitch
	s.mu.Unlock()
	band := specs.Height/2 + int(math.Round(pitch/0.7*float64(specs.Height/2-20)))
	for y := max(0, band-10); y < min(specs.Height, band+10); y++ {
		for x := 0; x < specs.Width; x++ {
			img.SetRGBA(x, y, color.RGBA{128, 128, 128, 255})
		}
	}
	phase := float64(now.UnixNano()%int64(2*time.Second)) / float64(2*time.Second)
	x0 := int(phase * float64(specs.Width-40))
	for y := specs.Height - 60; y < specs.Height-20; y++ {
		for x := x0; x < x0+40; x++ {
			img.SetRGBA(x, y, color.RGBA{255, 255, 255, 255})
		}
	}
	return img
}

// CameraFrame captures an image from the robot's camera.
func (r *Robot) CameraFrame() (*image.RGBA, error) {
	c, ok := r.backend.(Camera)
	if !ok {
		return nil, fault.Refusedf("the %s backend has no camera", r.backend.Name())
	}
	return c.Frame(time.Now()), nil
}

// CameraSpecs describes the robot's camera.
func (r *Robot) CameraSpecs() (CameraSpecs, error) {
	c, ok := r.backend.(Camera)
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
