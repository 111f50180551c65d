package facedetect

import (
	"fmt"
	"math"
	"testing"
)

// yunetOutputs builds YuNet's twelve outputs for a w×h input, all cells scoring 0, then lets set
// change cells.
func yunetOutputs(w, h int) map[string]Tensor {
	outs := map[string]Tensor{}
	for _, s := range yunetStrides {
		n := (w / s) * (h / s)
		for name, width := range map[string]int{"cls": 1, "obj": 1, "bbox": 4, "kps": 10} {
			k := fmt.Sprintf("%s_%d", name, s)
			outs[k] = Tensor{Name: k, Shape: []int64{1, int64(n), int64(width)}, Data: make([]float32, n*width)}
		}
	}
	return outs
}

func list(m map[string]Tensor) []Tensor {
	var l []Tensor
	for _, t := range m {
		l = append(l, t)
	}
	return l
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestDecodeYuNetPlacesABoxFromItsStrideAndCell(t *testing.T) {
	in := inputLayout{W: 320, H: 256}
	outs := yunetOutputs(in.W, in.H)
	// A face in the cell of row 3, column 5 of the stride-16 grid (20 columns): centre offset
	// (0.5, 0.25) cells, size exp(1)×exp(0.5) strides, eyes at (+0, -0.5) and (+1, -0.5) cells.
	i := 3*20 + 5
	outs["cls_16"].Data[i], outs["obj_16"].Data[i] = 0.81, 1
	copy(outs["bbox_16"].Data[4*i:], []float32{0.5, 0.25, 1, 0.5})
	copy(outs["kps_16"].Data[10*i:], []float32{0, -0.5, 1, -0.5})
	// Another cell scores under the threshold: sqrt(0.3 × 0.3) = 0.3.
	outs["cls_8"].Data[7], outs["obj_8"].Data[7] = 0.3, 0.3

	boxes, err := decodeYuNet(list(outs), in, 0.6)
	if err != nil {
		t.Fatal(err)
	}
	if len(boxes) != 1 {
		t.Fatalf("got %d boxes, want the one scoring 0.9: %+v", len(boxes), boxes)
	}
	b := boxes[0]
	cx, cy := (5+0.5)*16, (3+0.25)*16
	w, h := math.Exp(1)*16, math.Exp(0.5)*16
	if !near(b.Score, 0.9, 1e-6) || !near(b.X1, cx-w/2, 1e-3) || !near(b.X2, cx+w/2, 1e-3) ||
		!near(b.Y1, cy-h/2, 1e-3) || !near(b.Y2, cy+h/2, 1e-3) {
		t.Fatalf("box %+v, want centre (%v, %v) size %vx%v score 0.9", b, cx, cy, w, h)
	}
	if b.REye != [2]float64{5 * 16, 2.5 * 16} || b.LEye != [2]float64{6 * 16, 2.5 * 16} {
		t.Fatalf("eyes %v %v", b.REye, b.LEye)
	}
}

func TestDecodeYuNetClampsScoresAndRefusesAMissingOrMisshapenOutput(t *testing.T) {
	in := inputLayout{W: 64, H: 64}
	outs := yunetOutputs(64, 64)
	outs["cls_32"].Data[0], outs["obj_32"].Data[0] = 7, -3 // outside [0, 1]: clamped, 1 × 0 = 0
	boxes, err := decodeYuNet(list(outs), in, 0.01)
	if err != nil || len(boxes) != 0 {
		t.Fatalf("boxes %v err %v: want none", boxes, err)
	}
	delete(outs, "kps_16")
	if _, err := decodeYuNet(list(outs), in, 0.6); err == nil || err.Error() != "the YuNet model has no output kps_16" {
		t.Fatalf("err %v", err)
	}
	outs = yunetOutputs(64, 64)
	if _, err := decodeYuNet(list(outs), inputLayout{W: 128, H: 64}, 0.6); err == nil {
		t.Fatal("outputs of a 64×64 input decoded as a 128×64 one")
	}
}

// blazeOutputs128 builds BlazeFace's four outputs for a 128 px input, every anchor scoring very low.
func blazeOutputs128() []Tensor {
	mk := func(name string, n, width int, fill float32) Tensor {
		t := Tensor{Name: name, Shape: []int64{1, int64(n), int64(width)}, Data: make([]float32, n*width)}
		for i := range t.Data {
			t.Data[i] = fill
		}
		return t
	}
	return []Tensor{mk("Identity:0", 512, 1, -20), mk("Identity_1:0", 384, 1, -20), mk("Identity_2:0", 512, 16, 0), mk("Identity_3:0", 384, 16, 0)}
}

func TestDecodeBlazeFacePlacesABoxFromItsAnchor(t *testing.T) {
	outs := blazeOutputs128()
	// Second grid: 8×8 cells of 16 px, 6 anchors each. Anchor 3 of the cell at row 2, column 5.
	i := (2*8+5)*6 + 3
	outs[1].Data[i] = 2 // sigmoid(2) = 0.881
	copy(outs[3].Data[16*i:], []float32{4, -2, 30, 40, -6, -5, 6, -5})
	boxes, err := decodeBlazeFace(outs, inputLayout{W: 128, H: 128}, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if len(boxes) != 1 {
		t.Fatalf("%d boxes: %+v", len(boxes), boxes)
	}
	b := boxes[0]
	ax, ay := 5.5*16, 2.5*16
	if !near(b.Score, 1/(1+math.Exp(-2)), 1e-9) || b.X1 != ax+4-15 || b.X2 != ax+4+15 || b.Y1 != ay-2-20 || b.Y2 != ay-2+20 {
		t.Fatalf("box %+v, want centre (%v, %v) 30×40", b, ax+4, ay-2)
	}
	if b.REye != [2]float64{ax - 6, ay - 5} || b.LEye != [2]float64{ax + 6, ay - 5} {
		t.Fatalf("eyes %v %v", b.REye, b.LEye)
	}
	// First grid: 16×16 cells of 8 px, 2 anchors each; the outputs' order does not matter.
	outs = blazeOutputs128()
	outs[0], outs[3] = outs[3], outs[0]
	outs[3].Data[2*(16*15+0)+1] = 5
	boxes, err = decodeBlazeFace(outs, inputLayout{W: 128, H: 128}, 0.5)
	if err != nil || len(boxes) != 1 || boxes[0].X1 != 4 || boxes[0].Y1 != 15*8+4 {
		t.Fatalf("boxes %+v err %v: want one at anchor (4, 124)", boxes, err)
	}
}

func TestDecodeBlazeFaceRefusesOtherModels(t *testing.T) {
	outs := blazeOutputs128()
	if _, err := decodeBlazeFace(outs[:3], inputLayout{W: 128, H: 128}, 0.5); err == nil {
		t.Fatal("three outputs decoded")
	}
	outs[1].Data = outs[1].Data[:380]
	if _, err := decodeBlazeFace(outs, inputLayout{W: 128, H: 128}, 0.5); err == nil {
		t.Fatal("380 anchors decoded as a grid of 6 per cell")
	}
}

func TestNMSKeepsTheBestOfOverlappingBoxes(t *testing.T) {
	a := box{X1: 0, Y1: 0, X2: 10, Y2: 10, Score: 0.7}
	b := box{X1: 1, Y1: 1, X2: 11, Y2: 11, Score: 0.9} // IoU with a: 81/119 = 0.68
	c := box{X1: 20, Y1: 0, X2: 30, Y2: 10, Score: 0.8}
	d := box{X1: 5, Y1: 0, X2: 15, Y2: 10, Score: 0.85} // IoU with b: 54/146 = 0.37; with c: 0
	got := nms([]box{a, b, c, d}, 0.3)
	if len(got) != 2 || got[0] != b || got[1] != c {
		t.Fatalf("nms kept %+v, want b then c", got)
	}
	if got := nms([]box{a, b, c, d}, 0.5); len(got) != 3 || got[1] != d {
		t.Fatalf("nms at 0.5 kept %+v, want b, d, c", got)
	}
	if iou(a, box{X1: 10, Y1: 0, X2: 20, Y2: 10}) != 0 {
		t.Fatal("boxes that touch overlap")
	}
}

func FuzzDecoders(f *testing.F) {
	f.Add(uint8(3), uint8(2), []byte{1, 2, 3, 4})
	f.Fuzz(func(t *testing.T, w, h uint8, raw []byte) {
		in := inputLayout{W: int(w), H: int(h)}
		fill := func(n, width int) Tensor {
			tt := Tensor{Shape: []int64{1, int64(n), int64(width)}, Data: make([]float32, n*width)}
			for i := range tt.Data {
				if len(raw) > 0 {
					tt.Data[i] = float32(int8(raw[i%len(raw)])) / 8
				}
			}
			return tt
		}
		var yu []Tensor
		for _, s := range yunetStrides {
			n := (int(w) / s) * (int(h) / s)
			for name, width := range map[string]int{"cls": 1, "obj": 1, "bbox": 4, "kps": 10} {
				tt := fill(n, width)
				tt.Name = fmt.Sprintf("%s_%d", name, s)
				yu = append(yu, tt)
			}
		}
		decodeYuNet(yu, in, 0.1)
		n := int(w) % 40
		decodeBlazeFace([]Tensor{fill(n, 1), fill(n*3, 1), fill(n, 16), fill(n*3, 16)}, inputLayout{W: int(w), H: int(w)}, 0.1)
	})
}
