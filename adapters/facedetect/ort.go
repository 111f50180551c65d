//go:build linux || darwin

package facedetect

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// ONNX Runtime's C API is a table of function pointers (struct OrtApi in onnxruntime_c_api.h) that
// only ever grows at its end, so an entry's index is the same in every release. These are the
// indexes of the entries this package calls, counted in the header of API version 24 (ORT 1.24).
const (
	ortGetErrorMessage                = 2
	ortCreateEnv                      = 3
	ortCreateSessionFromArray         = 8
	ortRun                            = 9
	ortCreateSessionOptions           = 10
	ortSetSessionGraphOptimization    = 23
	ortSetIntraOpNumThreads           = 24
	ortSetInterOpNumThreads           = 25
	ortSessionGetInputCount           = 30
	ortSessionGetOutputCount          = 31
	ortSessionGetInputTypeInfo        = 33
	ortSessionGetOutputTypeInfo       = 34
	ortSessionGetInputName            = 36
	ortSessionGetOutputName           = 37
	ortCreateTensorWithDataAsOrtValue = 49
	ortGetTensorMutableData           = 51
	ortCastTypeInfoToTensorInfo       = 55
	ortGetTensorElementType           = 60
	ortGetDimensionsCount             = 61
	ortGetDimensions                  = 62
	ortGetTensorTypeAndShape          = 65
	ortCreateCpuMemoryInfo            = 69
	ortAllocatorFree                  = 76
	ortGetAllocatorWithDefaultOptions = 78
	ortReleaseEnv                     = 92
	ortReleaseStatus                  = 93
	ortReleaseMemoryInfo              = 94
	ortReleaseSession                 = 95
	ortReleaseValue                   = 96
	ortReleaseTypeInfo                = 98
	ortReleaseTensorTypeAndShapeInfo  = 99
	ortReleaseSessionOptions          = 100

	// ortAPIVersion is the API version asked for: every entry above exists since version 1, and a
	// runtime serves every version up to its own, so any ONNX Runtime of the last years answers.
	ortAPIVersion = 10

	ortLoggingLevelError = 3  // ORT_LOGGING_LEVEL_ERROR
	ortEnableAll         = 99 // ORT_ENABLE_ALL
	ortArenaAllocator    = 1  // OrtArenaAllocator
	ortMemTypeDefault    = 0  // OrtMemTypeDefault
	ortTensorFloat       = 1  // ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT
)

// Runtime is ONNX Runtime's shared library, opened once per process and path.
type Runtime struct {
	Path    string
	Version string
	api     uintptr // const OrtApi*
	env     uintptr // OrtEnv*
	alloc   uintptr // the default CPU allocator, for names the runtime returns
	mem     uintptr // OrtMemoryInfo* of CPU memory, for input tensors
}

var (
	runtimesMu sync.Mutex
	runtimes   = map[string]*Runtime{}
)

// OpenRuntime opens ONNX Runtime's shared library at path (the same Runtime for the same path).
func OpenRuntime(path string) (*Runtime, error) {
	runtimesMu.Lock()
	defer runtimesMu.Unlock()
	if rt, ok := runtimes[path]; ok {
		return rt, nil
	}
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("opening ONNX Runtime %s: %w", path, err)
	}
	getAPIBase, err := purego.Dlsym(lib, "OrtGetApiBase")
	if err != nil {
		return nil, fmt.Errorf("%s is not ONNX Runtime (no OrtGetApiBase): %w", path, err)
	}
	base, _, _ := purego.SyscallN(getAPIBase)
	if base == 0 {
		return nil, fmt.Errorf("%s: OrtGetApiBase returned nothing", path)
	}
	// struct OrtApiBase { const OrtApi* (*GetApi)(uint32_t); const char* (*GetVersionString)(void); }
	getAPI, getVersion := entry(base, 0), entry(base, 1)
	verPtr, _, _ := purego.SyscallN(getVersion)
	rt := &Runtime{Path: path, Version: goString(verPtr)}
	rt.api, _, _ = purego.SyscallN(getAPI, ortAPIVersion)
	if rt.api == 0 {
		return nil, fmt.Errorf("ONNX Runtime %s at %s does not serve C API version %d", rt.Version, path, ortAPIVersion)
	}
	logID := cString("robot-daemon")
	if err := rt.call(ortCreateEnv, ortLoggingLevelError, uintptr(unsafe.Pointer(&logID[0])), uintptr(unsafe.Pointer(&rt.env))); err != nil {
		return nil, fmt.Errorf("ONNX Runtime %s: creating its environment: %w", rt.Version, err)
	}
	runtime.KeepAlive(logID)
	if err := rt.call(ortGetAllocatorWithDefaultOptions, uintptr(unsafe.Pointer(&rt.alloc))); err != nil {
		return nil, err
	}
	if err := rt.call(ortCreateCpuMemoryInfo, ortArenaAllocator, ortMemTypeDefault, uintptr(unsafe.Pointer(&rt.mem))); err != nil {
		return nil, err
	}
	runtimes[path] = rt
	return rt, nil
}

// call calls entry i of the API table, which returns an OrtStatus* (NULL for success). Pointers to
// Go memory are passed as uintptr(unsafe.Pointer(p)) written in the call itself: uintptrescapes then
// moves what they point to onto the heap, where a goroutine's stack growth cannot move it while C
// writes to it, and keeps it alive until call returns.
//
//go:uintptrescapes
func (rt *Runtime) call(i int, args ...uintptr) error {
	status, _, _ := purego.SyscallN(entry(rt.api, i), args...)
	if status == 0 {
		return nil
	}
	msg, _, _ := purego.SyscallN(entry(rt.api, ortGetErrorMessage), status)
	err := errors.New(goString(msg))
	purego.SyscallN(entry(rt.api, ortReleaseStatus), status)
	return err
}

// release calls a Release entry of the API table.
func (rt *Runtime) release(i int, p uintptr) {
	if p != 0 {
		purego.SyscallN(entry(rt.api, i), p)
	}
}

// Tensor is a float tensor: its shape and its values in row-major order.
type Tensor struct {
	Name  string
	Shape []int64
	Data  []float32
}

// Session is a model loaded into the runtime, with one float input.
type Session struct {
	rt      *Runtime
	s       uintptr
	Input   Tensor   // the input's name and shape (a dimension < 0 is free); no data
	Outputs []Tensor // the outputs' names and shapes; no data
	inName  []byte
	outName [][]byte
	outPtrs []uintptr
}

// NewSession loads an ONNX model (its bytes) with threads intra-op threads (0: the runtime's
// choice).
func (rt *Runtime) NewSession(model []byte, threads int) (*Session, error) {
	if len(model) == 0 {
		return nil, errors.New("the model is empty")
	}
	var opts uintptr
	if err := rt.call(ortCreateSessionOptions, uintptr(unsafe.Pointer(&opts))); err != nil {
		return nil, err
	}
	defer rt.release(ortReleaseSessionOptions, opts)
	if threads > 0 {
		if err := rt.call(ortSetIntraOpNumThreads, opts, uintptr(threads)); err != nil {
			return nil, err
		}
	}
	if err := rt.call(ortSetInterOpNumThreads, opts, 1); err != nil {
		return nil, err
	}
	if err := rt.call(ortSetSessionGraphOptimization, opts, ortEnableAll); err != nil {
		return nil, err
	}
	s := &Session{rt: rt}
	if err := rt.call(ortCreateSessionFromArray, rt.env, uintptr(unsafe.Pointer(&model[0])), uintptr(len(model)), opts, uintptr(unsafe.Pointer(&s.s))); err != nil {
		return nil, fmt.Errorf("loading the model: %w", err)
	}
	runtime.KeepAlive(model)
	var nIn, nOut uintptr
	if err := rt.call(ortSessionGetInputCount, s.s, uintptr(unsafe.Pointer(&nIn))); err != nil {
		s.Close()
		return nil, err
	}
	if err := rt.call(ortSessionGetOutputCount, s.s, uintptr(unsafe.Pointer(&nOut))); err != nil {
		s.Close()
		return nil, err
	}
	if nIn != 1 {
		s.Close()
		return nil, fmt.Errorf("the model has %d inputs: a face detector has one image", nIn)
	}
	in, err := s.info(ortSessionGetInputName, ortSessionGetInputTypeInfo, 0)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.Input, s.inName = in, cString(in.Name)
	for i := range int(nOut) {
		out, err := s.info(ortSessionGetOutputName, ortSessionGetOutputTypeInfo, i)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.Outputs = append(s.Outputs, out)
		s.outName = append(s.outName, cString(out.Name))
	}
	s.outPtrs = make([]uintptr, len(s.outName))
	return s, nil
}

// info reads the name and float shape of input or output i.
func (s *Session) info(nameFn, typeFn, i int) (Tensor, error) {
	rt := s.rt
	var name, typ, tinfo uintptr
	if err := rt.call(nameFn, s.s, uintptr(i), rt.alloc, uintptr(unsafe.Pointer(&name))); err != nil {
		return Tensor{}, err
	}
	t := Tensor{Name: goString(name)}
	rt.call(ortAllocatorFree, rt.alloc, name) //nolint:errcheck // a free reports nothing useful
	if err := rt.call(typeFn, s.s, uintptr(i), uintptr(unsafe.Pointer(&typ))); err != nil {
		return Tensor{}, err
	}
	defer rt.release(ortReleaseTypeInfo, typ)
	if err := rt.call(ortCastTypeInfoToTensorInfo, typ, uintptr(unsafe.Pointer(&tinfo))); err != nil || tinfo == 0 {
		return Tensor{}, fmt.Errorf("%s is not a tensor", t.Name)
	}
	var elem uintptr
	if err := rt.call(ortGetTensorElementType, tinfo, uintptr(unsafe.Pointer(&elem))); err != nil {
		return Tensor{}, err
	}
	if elem != ortTensorFloat {
		return Tensor{}, fmt.Errorf("%s holds element type %d, not float32", t.Name, elem)
	}
	shape, err := rt.dims(tinfo)
	t.Shape = shape
	return t, err
}

func (rt *Runtime) dims(tinfo uintptr) ([]int64, error) {
	var n uintptr
	if err := rt.call(ortGetDimensionsCount, tinfo, uintptr(unsafe.Pointer(&n))); err != nil {
		return nil, err
	}
	if n == 0 {
		return []int64{}, nil
	}
	shape := make([]int64, n)
	if err := rt.call(ortGetDimensions, tinfo, uintptr(unsafe.Pointer(&shape[0])), n); err != nil {
		return nil, err
	}
	return shape, nil
}

// Run runs the model on input (whose shape must have no free dimension) and returns its outputs,
// in the order of Outputs. The session must not run twice at once: Detector serializes its calls.
func (s *Session) Run(input []float32, shape []int64) ([]Tensor, error) {
	rt := s.rt
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	if n != int64(len(input)) || n == 0 {
		return nil, fmt.Errorf("an input of %d values does not have the shape %v", len(input), shape)
	}
	var value uintptr
	if err := rt.call(ortCreateTensorWithDataAsOrtValue, rt.mem, uintptr(unsafe.Pointer(&input[0])), uintptr(4*len(input)),
		uintptr(unsafe.Pointer(&shape[0])), uintptr(len(shape)), ortTensorFloat, uintptr(unsafe.Pointer(&value))); err != nil {
		return nil, err
	}
	defer rt.release(ortReleaseValue, value)
	inNames := []uintptr{uintptr(unsafe.Pointer(&s.inName[0]))}
	outNames := make([]uintptr, len(s.outName))
	for i, b := range s.outName {
		outNames[i] = uintptr(unsafe.Pointer(&b[0]))
	}
	clear(s.outPtrs)
	err := rt.call(ortRun, s.s, 0, uintptr(unsafe.Pointer(&inNames[0])), uintptr(unsafe.Pointer(&value)), 1, uintptr(unsafe.Pointer(&outNames[0])), uintptr(len(outNames)), uintptr(unsafe.Pointer(&s.outPtrs[0])))
	runtime.KeepAlive(input)
	runtime.KeepAlive(shape)
	runtime.KeepAlive(inNames)
	runtime.KeepAlive(outNames)
	runtime.KeepAlive(s)
	defer func() {
		for _, p := range s.outPtrs {
			rt.release(ortReleaseValue, p)
		}
	}()
	if err != nil {
		return nil, fmt.Errorf("running the model: %w", err)
	}
	outs := make([]Tensor, len(s.outPtrs))
	for i, p := range s.outPtrs {
		var tinfo, data uintptr
		if err := rt.call(ortGetTensorTypeAndShape, p, uintptr(unsafe.Pointer(&tinfo))); err != nil {
			return nil, err
		}
		shape, err := rt.dims(tinfo)
		rt.release(ortReleaseTensorTypeAndShapeInfo, tinfo)
		if err != nil {
			return nil, err
		}
		if err := rt.call(ortGetTensorMutableData, p, uintptr(unsafe.Pointer(&data))); err != nil {
			return nil, err
		}
		count := int64(1)
		for _, d := range shape {
			count *= d
		}
		vals := make([]float32, count)
		if count > 0 {
			copy(vals, unsafe.Slice((*float32)(pointer(data)), count))
		}
		outs[i] = Tensor{Name: s.Outputs[i].Name, Shape: shape, Data: vals}
	}
	return outs, nil
}

// Close releases the session.
func (s *Session) Close() {
	s.rt.release(ortReleaseSession, s.s)
	s.s = 0
}

// entry reads function pointer i of a C table of function pointers.
func entry(table uintptr, i int) uintptr {
	return *(*uintptr)(unsafe.Add(pointer(table), i*int(unsafe.Sizeof(uintptr(0)))))
}

// pointer turns an address C gave into a pointer (C memory: the Go collector does not track it).
func pointer(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

func cString(s string) []byte { return append([]byte(s), 0) }

func goString(p uintptr) string {
	if p == 0 {
		return ""
	}
	var n int
	for *(*byte)(unsafe.Add(pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(pointer(p)), n))
}
