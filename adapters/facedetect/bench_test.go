package facedetect

import (
	"image"
	"image/draw"
	"testing"

	"github.com/robothub/robothub/internal/testkit/facetest"
)

// BenchmarkDetect is head tracking's cost per camera frame: a 640×480 frame with a face, letterboxed
// into BlazeFace's 256×256 input, run on ONNX Runtime with the daemon's one thread, decoded. Head
// tracking runs it 10 times a second (core/robot's trackPeriod); target ≤ 20 ms a frame here, so
// that a robot's slower CPU stays within its 100 ms period.
//
//	go test -run '^$' -bench '^BenchmarkDetect$' -benchtime 200x ./adapters/facedetect
func BenchmarkDetect(b *testing.B) {
	d := openDetector(b, facetest.BlazeFace256)
	photo := facetest.LoadPhoto(b)
	frame := image.NewRGBA(image.Rect(0, 0, 640, 480))
	face := facetest.PhotoFaces[0]
	draw.Draw(frame, frame.Bounds(), photo, image.Pt(int(face.X)-320, int(face.Y)-240), draw.Src)
	if faces, err := d.Detect(frame); err != nil || len(faces) == 0 {
		b.Fatalf("faces %v err %v: want the face", faces, err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := d.Detect(frame); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/frame")
}

// BenchmarkPreprocess is the Go side of a frame: letterboxing 640×480 into 256×256 (x/image/draw)
// and writing the float input.
func BenchmarkPreprocess(b *testing.B) {
	frame := image.NewRGBA(image.Rect(0, 0, 640, 480))
	for i := range frame.Pix {
		frame.Pix[i] = byte(i * 7)
	}
	l := inputLayout{W: 256, H: 256, Scale: 2.0 / 255, Bias: -1}
	dst := image.NewRGBA(image.Rect(0, 0, l.W, l.H))
	in := make([]float32, 3*l.W*l.H)
	for b.Loop() {
		fit(frame, dst)
		l.tensor(dst, in)
	}
}
