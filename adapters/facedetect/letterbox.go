package facedetect

import (
	"image"
	"image/draw"

	xdraw "golang.org/x/image/draw"
)

// letterbox is how a frame was fitted into the model's input: scaled by Scale, keeping its aspect,
// and centred, with the rest padded; Frame maps a point of the input back to the frame.
type letterbox struct {
	Scale      float64
	OffX, OffY float64 // where the frame's top-left corner lands in the input
}

// Frame maps a point of the model's input (in pixels) to the frame's pixels.
func (l letterbox) Frame(x, y float64) (float64, float64) {
	return (x - l.OffX) / l.Scale, (y - l.OffY) / l.Scale
}

// inputLayout is what a model wants as its input.
type inputLayout struct {
	W, H  int
	NCHW  bool // channels first (YuNet) or last (BlazeFace)
	BGR   bool // channel order blue, green, red (YuNet, as OpenCV feeds it)
	Scale float32
	Bias  float32 // a channel value v (0..255) becomes v*Scale + Bias
}

// fit scales frame into dst (W×H) keeping its aspect, centred, padded with black, and returns how.
// dst is reused from frame to frame.
func fit(frame *image.RGBA, dst *image.RGBA) letterbox {
	fw, fh := frame.Bounds().Dx(), frame.Bounds().Dy()
	w, h := dst.Bounds().Dx(), dst.Bounds().Dy()
	scale := min(float64(w)/float64(fw), float64(h)/float64(fh))
	sw, sh := max(1, int(float64(fw)*scale+0.5)), max(1, int(float64(fh)*scale+0.5))
	ox, oy := (w-sw)/2, (h-sh)/2
	draw.Draw(dst, dst.Bounds(), image.Black, image.Point{}, draw.Src)
	// ApproxBiLinear: a camera frame shrinks by 2 to 10 times; its aliasing costs no detection
	// (the tests' faces are found) and it is several times faster than BiLinear.
	xdraw.ApproxBiLinear.Scale(dst, image.Rect(ox, oy, ox+sw, oy+sh), frame, frame.Bounds(), xdraw.Src, nil)
	return letterbox{Scale: float64(sw) / float64(fw), OffX: float64(ox), OffY: float64(oy)}
}

// tensor writes the pixels of img (W×H, as fit made it) into in, as the layout says.
func (l inputLayout) tensor(img *image.RGBA, in []float32) {
	plane := l.W * l.H
	r, g, b := 0, 1, 2
	if l.BGR {
		r, b = 2, 0
	}
	for y := range l.H {
		row := img.Pix[y*img.Stride : y*img.Stride+4*l.W]
		for x := range l.W {
			p := row[4*x : 4*x+3 : 4*x+3]
			i := y*l.W + x
			vr, vg, vb := float32(p[0])*l.Scale+l.Bias, float32(p[1])*l.Scale+l.Bias, float32(p[2])*l.Scale+l.Bias
			if l.NCHW {
				in[r*plane+i], in[g*plane+i], in[b*plane+i] = vr, vg, vb
			} else {
				in[3*i+r], in[3*i+g], in[3*i+b] = vr, vg, vb
			}
		}
	}
}
