package facedetect

import (
	"errors"
	"fmt"
	"image"
	"math"
	"sync"

	"github.com/robothub/robothub/core/robot"
)

// Options tune a Detector; the zero value is the daemon's choice.
type Options struct {
	// MinScore is the score below which a box is not a face (default 0.6).
	MinScore float64
	// MaxIoU is how much two boxes of one face may overlap before NMS keeps only the better
	// (default 0.3).
	MaxIoU float64
	// Threads is ONNX Runtime's intra-op threads (default 1: the robot's CPU also runs the apps).
	Threads int
	// InputSize is the side of the square input given to a model whose input size is free (default
	// 320, rounded up to a multiple of 32 as YuNet's strides need).
	InputSize int
}

func (o Options) withDefaults() Options {
	if o.MinScore <= 0 {
		o.MinScore = 0.6
	}
	if o.MaxIoU <= 0 {
		o.MaxIoU = 0.3
	}
	if o.Threads <= 0 {
		o.Threads = 1
	}
	if o.InputSize <= 0 {
		o.InputSize = 320
	}
	o.InputSize = (o.InputSize + 31) / 32 * 32
	return o
}

// Detector finds faces in frames with a face-detection model on ONNX Runtime. It implements
// core/robot's Detector; one frame at a time (its buffers are reused).
type Detector struct {
	Model string // "YuNet" or "BlazeFace"

	mu     sync.Mutex
	sess   *Session
	layout inputLayout
	decode decoder
	opt    Options
	img    *image.RGBA
	in     []float32
	shape  []int64
}

var _ robot.Detector = (*Detector)(nil)

// New loads model (the bytes of an ONNX file: YuNet or BlazeFace, told apart by their outputs)
// into rt.
func New(rt *Runtime, model []byte, opt Options) (*Detector, error) {
	opt = opt.withDefaults()
	sess, err := rt.NewSession(model, opt.Threads)
	if err != nil {
		return nil, err
	}
	d := &Detector{sess: sess, opt: opt}
	if err := d.configure(); err != nil {
		sess.Close()
		return nil, err
	}
	return d, nil
}

// configure reads the model's input layout and picks its decoder.
func (d *Detector) configure() error {
	in := d.sess.Input
	if len(in.Shape) != 4 {
		return fmt.Errorf("the model's input %s has shape %v: a face detector takes one image [1, 3, H, W] or [1, H, W, 3]", in.Name, in.Shape)
	}
	var l inputLayout
	switch {
	case in.Shape[1] == 3:
		l.NCHW, l.H, l.W = true, int(in.Shape[2]), int(in.Shape[3])
	case in.Shape[3] == 3:
		l.H, l.W = int(in.Shape[1]), int(in.Shape[2])
	default:
		return fmt.Errorf("the model's input %s has shape %v: no dimension of 3 colour channels", in.Name, in.Shape)
	}
	if l.W <= 0 {
		l.W = d.opt.InputSize
	}
	if l.H <= 0 {
		l.H = d.opt.InputSize
	}
	switch outs := d.sess.Outputs; {
	case isYuNet(outs):
		// YuNet takes OpenCV's blob: BGR, 0..255, sides that strides of 32 divide.
		d.Model, d.decode = "YuNet", decodeYuNet
		l.BGR, l.Scale, l.Bias = true, 1, 0
		if l.W%32 != 0 || l.H%32 != 0 {
			return fmt.Errorf("the YuNet model's input is %dx%d: its sides must be multiples of 32", l.W, l.H)
		}
	case isBlazeFace(outs):
		// BlazeFace takes RGB scaled to [-1, 1].
		d.Model, d.decode = "BlazeFace", decodeBlazeFace
		l.Scale, l.Bias = 2.0/255, -1
	default:
		return fmt.Errorf("the model is neither YuNet (outputs cls_8, obj_8, bbox_8, kps_8, ...) nor BlazeFace (2 score and 2 regressor outputs): its outputs are %v", names(outs))
	}
	d.layout = l
	d.img = image.NewRGBA(image.Rect(0, 0, l.W, l.H))
	d.in = make([]float32, 3*l.W*l.H)
	if l.NCHW {
		d.shape = []int64{1, 3, int64(l.H), int64(l.W)}
	} else {
		d.shape = []int64{1, int64(l.H), int64(l.W), 3}
	}
	return nil
}

// Detect returns the faces in frame, best score first.
func (d *Detector) Detect(frame *image.RGBA) ([]robot.Face, error) {
	if frame == nil || frame.Bounds().Empty() {
		return nil, errors.New("an empty frame")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sess == nil {
		return nil, errors.New("the face detector is closed")
	}
	lb := fit(frame, d.img)
	d.layout.tensor(d.img, d.in)
	outs, err := d.sess.Run(d.in, d.shape)
	if err != nil {
		return nil, err
	}
	boxes, err := d.decode(outs, d.layout, d.opt.MinScore)
	if err != nil {
		return nil, err
	}
	return faces(nms(boxes, d.opt.MaxIoU), lb, frame.Bounds()), nil
}

// faces maps boxes of the model's input to faces of the frame.
func faces(boxes []box, lb letterbox, frame image.Rectangle) []robot.Face {
	fw, fh := float64(frame.Dx()), float64(frame.Dy())
	out := make([]robot.Face, 0, len(boxes))
	for _, b := range boxes {
		x1, y1 := lb.Frame(b.X1, b.Y1)
		x2, y2 := lb.Frame(b.X2, b.Y2)
		rx, ry := lb.Frame(b.REye[0], b.REye[1])
		lx, ly := lb.Frame(b.LEye[0], b.LEye[1])
		out = append(out, robot.Face{
			X:     clampUnit((x1+x2)/fw - 1),
			Y:     clampUnit((y1+y2)/fh - 1),
			Width: (x2 - x1) / fw,
			// The angle of the line from the right eye (on the image's left) to the left eye, with
			// y down: 0 for an upright face, positive when it leans toward the image's right.
			Roll:  math.Atan2(ly-ry, lx-rx),
			Score: b.Score,
		})
	}
	return out
}

func clampUnit(v float64) float64 { return min(1, max(-1, v)) }

// Close releases the model; Detect fails after it.
func (d *Detector) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sess != nil {
		d.sess.Close()
		d.sess = nil
	}
}
