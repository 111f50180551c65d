package facedetect

import (
	"image"
	"image/color"
	"testing"
)

func TestFitCentresTheFrameAndMapsPointsBack(t *testing.T) {
	frame := image.NewRGBA(image.Rect(0, 0, 640, 480))
	for y := range 480 {
		for x := range 640 {
			frame.SetRGBA(x, y, color.RGBA{R: 200, G: 100, B: 50, A: 255})
		}
	}
	dst := image.NewRGBA(image.Rect(0, 0, 320, 320))
	lb := fit(frame, dst)
	if lb.Scale != 0.5 || lb.OffX != 0 || lb.OffY != 40 {
		t.Fatalf("letterbox %+v, want scale 0.5 offset (0, 40)", lb)
	}
	if x, y := lb.Frame(160, 160); x != 320 || y != 240 {
		t.Fatalf("the input's centre maps to (%v, %v), want the frame's (320, 240)", x, y)
	}
	if got := dst.RGBAAt(10, 20); got != (color.RGBA{A: 255}) {
		t.Fatalf("padding is %v, want black", got)
	}
	if got := dst.RGBAAt(10, 100); got.R != 200 || got.G != 100 || got.B != 50 {
		t.Fatalf("the frame's pixels became %v", got)
	}
}

func TestFitOfASubImageReadsOnlyItsPixels(t *testing.T) {
	frame := image.NewRGBA(image.Rect(0, 0, 100, 100))
	for y := range 100 {
		for x := range 100 {
			if x >= 50 {
				frame.SetRGBA(x, y, color.RGBA{R: 255, A: 255})
			}
		}
	}
	dst := image.NewRGBA(image.Rect(0, 0, 32, 32))
	fit(frame.SubImage(image.Rect(50, 0, 100, 50)).(*image.RGBA), dst)
	if got := dst.RGBAAt(0, 0); got.R != 255 {
		t.Fatalf("the sub-image's corner became %v, want red", got)
	}
}

func TestTensorLayouts(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 2, 1))
	img.SetRGBA(0, 0, color.RGBA{R: 10, G: 20, B: 30, A: 255})
	img.SetRGBA(1, 0, color.RGBA{R: 40, G: 50, B: 60, A: 255})
	in := make([]float32, 6)
	inputLayout{W: 2, H: 1, NCHW: true, BGR: true, Scale: 1}.tensor(img, in)
	if want := []float32{30, 60, 20, 50, 10, 40}; !equal(in, want) {
		t.Fatalf("NCHW BGR: %v, want %v", in, want)
	}
	inputLayout{W: 2, H: 1, Scale: 2.0 / 255, Bias: -1}.tensor(img, in)
	want := []float32{10, 20, 30, 40, 50, 60}
	for i := range want {
		want[i] = want[i]*2/255 - 1
	}
	if !equal(in, want) {
		t.Fatalf("NHWC RGB in [-1, 1]: %v, want %v", in, want)
	}
}

func equal(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i]-b[i] > 1e-6 || b[i]-a[i] > 1e-6 {
			return false
		}
	}
	return true
}
