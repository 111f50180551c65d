// Package facedetect is the robot daemon's face detector: a face-detection ONNX model (YuNet, as the
// public daemon runs, or MediaPipe's BlazeFace) on ONNX Runtime, which it loads at run time without
// cgo (purego opens libonnxruntime and calls its C API table), so robot-daemon cross-builds for
// linux/arm64 with CGO_ENABLED=0. It holds the pre-processing (letterboxing an RGBA frame into the
// model's float input), the post-processing of each model's outputs (anchors and strides to boxes,
// scores, non-maximum suppression), where the runtime and the model are found, and a
// core/robot.Detector built from them.
package facedetect
