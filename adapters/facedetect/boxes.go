package facedetect

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// box is a face a model found, in the pixels of its input: its corners, its score, and its eyes
// (the person's right eye, then left; on the image the right eye is the one on the left).
type box struct {
	X1, Y1, X2, Y2 float64
	Score          float64
	REye, LEye     [2]float64
}

func (b box) area() float64 { return max(0, b.X2-b.X1) * max(0, b.Y2-b.Y1) }

func iou(a, b box) float64 {
	w := min(a.X2, b.X2) - max(a.X1, b.X1)
	h := min(a.Y2, b.Y2) - max(a.Y1, b.Y1)
	if w <= 0 || h <= 0 {
		return 0
	}
	inter := w * h
	return inter / (a.area() + b.area() - inter)
}

// nms keeps, best score first, each box that overlaps no kept box by more than maxIoU.
func nms(boxes []box, maxIoU float64) []box {
	slices.SortStableFunc(boxes, func(a, b box) int { return cmp.Compare(b.Score, a.Score) })
	var kept []box
	for _, b := range boxes {
		if !slices.ContainsFunc(kept, func(k box) bool { return iou(k, b) > maxIoU }) {
			kept = append(kept, b)
		}
	}
	return kept
}

// decoder turns a model's outputs into boxes scoring at least minScore, before NMS.
type decoder func(outs []Tensor, in inputLayout, minScore float64) ([]box, error)

// outputByName returns the output named name (ONNX Runtime may add ":0").
func outputByName(outs []Tensor, name string) (Tensor, bool) {
	for _, o := range outs {
		if o.Name == name || o.Name == name+":0" {
			return o, true
		}
	}
	return Tensor{}, false
}

// rows checks that t holds n rows of width values and returns its data.
func rows(t Tensor, n, width int) ([]float32, error) {
	if len(t.Data) != n*width {
		return nil, fmt.Errorf("output %s has shape %v: want %d rows of %d", t.Name, t.Shape, n, width)
	}
	return t.Data, nil
}

// YuNet (OpenCV's face detector, the public daemon's) predicts at strides 8, 16 and 32, one anchor
// per cell: a class score and an objectness (the face's score is their geometric mean), the box
// centre as an offset from the cell in strides and its size as the log of strides, and five
// landmarks as offsets in strides (right eye, left eye, nose tip, mouth corners).
var yunetStrides = []int{8, 16, 32}

func isYuNet(outs []Tensor) bool {
	_, ok := outputByName(outs, "cls_8")
	return ok
}

func decodeYuNet(outs []Tensor, in inputLayout, minScore float64) ([]box, error) {
	var found []box
	for _, s := range yunetStrides {
		cols, rowsN := in.W/s, in.H/s
		n := cols * rowsN
		var data [4][]float32
		for i, name := range []string{"cls", "obj", "bbox", "kps"} {
			t, ok := outputByName(outs, fmt.Sprintf("%s_%d", name, s))
			if !ok {
				return nil, fmt.Errorf("the YuNet model has no output %s_%d", name, s)
			}
			width := [4]int{1, 1, 4, 10}[i]
			d, err := rows(t, n, width)
			if err != nil {
				return nil, err
			}
			data[i] = d
		}
		cls, obj, bbox, kps := data[0], data[1], data[2], data[3]
		stride := float64(s)
		for r := range rowsN {
			for c := range cols {
				i := r*cols + c
				score := math.Sqrt(clamp01(float64(cls[i])) * clamp01(float64(obj[i])))
				if score < minScore {
					continue
				}
				cx := (float64(c) + float64(bbox[4*i])) * stride
				cy := (float64(r) + float64(bbox[4*i+1])) * stride
				w := math.Exp(float64(bbox[4*i+2])) * stride
				h := math.Exp(float64(bbox[4*i+3])) * stride
				k := kps[10*i : 10*i+4]
				found = append(found, box{
					X1: cx - w/2, Y1: cy - h/2, X2: cx + w/2, Y2: cy + h/2, Score: score,
					REye: [2]float64{(float64(k[0]) + float64(c)) * stride, (float64(k[1]) + float64(r)) * stride},
					LEye: [2]float64{(float64(k[2]) + float64(c)) * stride, (float64(k[3]) + float64(r)) * stride},
				})
			}
		}
	}
	return found, nil
}

// BlazeFace (MediaPipe's short-range detector) predicts on two grids of a square input: 2 anchors
// per cell of the first (stride 8 at 128 px), 6 per cell of the second (stride 16), anchors at the
// cells' centres. A raw score goes through a sigmoid; the 16 regressors of an anchor are the box
// centre's offset from the anchor and the box's size, then six key points' offsets (right eye, left
// eye, nose, mouth, right ear, left ear), all in input pixels.
var blazeAnchors = []int{2, 6}

// blazeOutputs returns the score and regressor outputs of each BlazeFace grid, biggest grid first.
func blazeOutputs(outs []Tensor) (scores, regs []Tensor, ok bool) {
	for _, o := range outs {
		switch o.Shape[len(o.Shape)-1] {
		case 1:
			scores = append(scores, o)
		case 16:
			regs = append(regs, o)
		}
	}
	byRows := func(a, b Tensor) int { return cmp.Compare(len(b.Data), len(a.Data)) }
	slices.SortStableFunc(scores, byRows)
	slices.SortStableFunc(regs, byRows)
	return scores, regs, len(outs) == 4 && len(scores) == 2 && len(regs) == 2
}

func isBlazeFace(outs []Tensor) bool {
	_, _, ok := blazeOutputs(outs)
	return ok
}

func decodeBlazeFace(outs []Tensor, in inputLayout, minScore float64) ([]box, error) {
	scores, regs, ok := blazeOutputs(outs)
	if !ok || in.W != in.H {
		return nil, fmt.Errorf("not a BlazeFace model: outputs %v, input %dx%d", names(outs), in.W, in.H)
	}
	size := float64(in.W)
	var found []box
	for layer, anchors := range blazeAnchors {
		n := len(scores[layer].Data)
		g := int(math.Round(math.Sqrt(float64(n / anchors))))
		if g*g*anchors != n {
			return nil, fmt.Errorf("BlazeFace output %s has %d anchors: not a square grid of %d per cell", scores[layer].Name, n, anchors)
		}
		raw, err := rows(regs[layer], n, 16)
		if err != nil {
			return nil, err
		}
		cell := size / float64(g)
		for i, s := range scores[layer].Data {
			score := 1 / (1 + math.Exp(-float64(s)))
			if score < minScore {
				continue
			}
			c := i / anchors
			ax, ay := (float64(c%g)+0.5)*cell, (float64(c/g)+0.5)*cell
			r := raw[16*i : 16*i+16]
			cx, cy := ax+float64(r[0]), ay+float64(r[1])
			w, h := float64(r[2]), float64(r[3])
			found = append(found, box{
				X1: cx - w/2, Y1: cy - h/2, X2: cx + w/2, Y2: cy + h/2, Score: score,
				REye: [2]float64{ax + float64(r[4]), ay + float64(r[5])},
				LEye: [2]float64{ax + float64(r[6]), ay + float64(r[7])},
			})
		}
	}
	return found, nil
}

func clamp01(v float64) float64 { return min(1, max(0, v)) }

func names(outs []Tensor) []string {
	n := make([]string, len(outs))
	for i, o := range outs {
		n[i] = fmt.Sprintf("%s%v", o.Name, o.Shape)
	}
	return n
}
