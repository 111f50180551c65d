package facedetect

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// LibraryEnv names ONNX Runtime's shared library when no flag does. It is the variable the ONNX
// Runtime bindings of other languages read (Rust's ort crate), so a machine set up for them works.
const LibraryEnv = "ORT_DYLIB_PATH"

// libraryNames are the file names ONNX Runtime's shared library has on this system.
func libraryNames() []string {
	if runtime.GOOS == "darwin" {
		return []string{"libonnxruntime.dylib"}
	}
	return []string{"libonnxruntime.so", "libonnxruntime.so.1"}
}

// libraryDirs are where a package manager or an install of ONNX Runtime puts it, after the
// folders of the dynamic loader's path variable.
func libraryDirs(getenv func(string) string) []string {
	var dirs []string
	for _, v := range []string{"LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH"} {
		for _, d := range filepath.SplitList(getenv(v)) {
			if d != "" {
				dirs = append(dirs, d)
			}
		}
	}
	if runtime.GOOS == "darwin" {
		return append(dirs, "/opt/homebrew/lib", "/usr/local/lib")
	}
	triplet := map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}[runtime.GOARCH]
	dirs = append(dirs, "/usr/local/lib", "/usr/lib")
	if triplet != "" {
		dirs = append(dirs, "/usr/lib/"+triplet, "/usr/local/lib/"+triplet)
	}
	return append(dirs, "/opt/onnxruntime/lib")
}

// FindRuntime opens ONNX Runtime's shared library: path when it is given (a flag), else the file
// that LibraryEnv names, else the first libonnxruntime of the usual library folders. Its error says
// what is missing and every place it looked.
func FindRuntime(path string, getenv func(string) string) (*Runtime, error) {
	if path != "" {
		return OpenRuntime(path)
	}
	if p := getenv(LibraryEnv); p != "" {
		rt, err := OpenRuntime(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", LibraryEnv, err)
		}
		return rt, nil
	}
	var looked []string
	var failed []error
	for _, dir := range libraryDirs(getenv) {
		for _, name := range libraryNames() {
			p := filepath.Join(dir, name)
			looked = append(looked, p)
			if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
				continue
			}
			rt, err := OpenRuntime(p)
			if err == nil {
				return rt, nil
			}
			failed = append(failed, err)
		}
	}
	msg := fmt.Sprintf("ONNX Runtime's shared library (libonnxruntime) was not found: give it with --onnxruntime or %s; looked at %s",
		LibraryEnv, strings.Join(looked, ", "))
	if len(failed) > 0 {
		msg += "; " + errors.Join(failed...).Error()
	}
	return nil, errors.New(msg)
}
