// Package pyindex is a PEP 503 "simple" package index on loopback, holding wheels it builds
// itself: what tests of installs with dependencies use, since the machines that run them reach
// no Python package index.
package pyindex

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Index is a running simple index. Its methods are safe for concurrent use.
type Index struct {
	server *httptest.Server

	mu       sync.Mutex
	files    map[string]map[string][]byte // normalized project → file name → wheel
	requests []string                     // paths asked for, in order
}

// New starts an index on 127.0.0.1; it stops when the test ends (call Close otherwise).
func New() *Index {
	idx := &Index{files: map[string]map[string][]byte{}}
	idx.server = httptest.NewServer(http.HandlerFunc(idx.serve))
	return idx
}

// URL is the index URL pip takes: http://127.0.0.1:<port>/simple.
func (idx *Index) URL() string { return idx.server.URL + "/simple" }

// Close stops the index.
func (idx *Index) Close() { idx.server.Close() }

// Requests returns the paths requested so far.
func (idx *Index) Requests() []string {
	idx.mu.Lock()
	defer idx.mu.Unlock()
	return append([]string(nil), idx.requests...)
}

// Asked reports whether a project's page was requested.
func (idx *Index) Asked(project string) bool {
	want := "/simple/" + Normalize(project) + "/"
	for _, r := range idx.Requests() {
		if r == want {
			return true
		}
	}
	return false
}

var nonAlnum = regexp.MustCompile(`[-_.]+`)

// Normalize is the PEP 503 normalized form of a project name.
func Normalize(name string) string { return strings.ToLower(nonAlnum.ReplaceAllString(name, "-")) }

// Publish adds a pure-Python wheel of project at version: a package (the project name with
// underscores) whose __init__ sets VERSION, and that requires requires.
func (idx *Index) Publish(project, version string, requires ...string) {
	idx.PublishFiles(project, version, map[string]string{
		strings.ReplaceAll(Normalize(project), "-", "_") + "/__init__.py": fmt.Sprintf("VERSION = %q\n", version),
	}, requires...)
}

// PublishFiles adds a wheel of project at version holding exactly files (path in the wheel →
// content), such as a hostile one that ships sitecustomize.py or a .pth file.
func (idx *Index) PublishFiles(project, version string, files map[string]string, requires ...string) {
	name, data := BuildWheel(project, version, files, requires...)
	idx.mu.Lock()
	defer idx.mu.Unlock()
	p := Normalize(project)
	if idx.files[p] == nil {
		idx.files[p] = map[string][]byte{}
	}
	idx.files[p][name] = data
}

func (idx *Index) serve(w http.ResponseWriter, r *http.Request) {
	idx.mu.Lock()
	idx.requests = append(idx.requests, r.URL.Path)
	idx.mu.Unlock()
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) == 1 && parts[0] == "simple":
		idx.mu.Lock()
		var b strings.Builder
		b.WriteString("<!DOCTYPE html><html><body>\n")
		names := make([]string, 0, len(idx.files))
		for p := range idx.files {
			names = append(names, p)
		}
		sort.Strings(names)
		for _, p := range names {
			fmt.Fprintf(&b, "<a href=\"/simple/%s/\">%s</a>\n", p, p)
		}
		idx.mu.Unlock()
		b.WriteString("</body></html>\n")
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(b.String()))
	case len(parts) == 2 && parts[0] == "simple":
		if Normalize(parts[1]) != parts[1] {
			http.Redirect(w, r, "/simple/"+Normalize(parts[1])+"/", http.StatusMovedPermanently)
			return
		}
		idx.mu.Lock()
		files := idx.files[parts[1]]
		var b strings.Builder
		b.WriteString("<!DOCTYPE html><html><body>\n")
		names := make([]string, 0, len(files))
		for f := range files {
			names = append(names, f)
		}
		sort.Strings(names)
		for _, f := range names {
			sum := sha256.Sum256(files[f])
			fmt.Fprintf(&b, "<a href=\"/files/%s#sha256=%s\">%s</a>\n", html.EscapeString(f), hex.EncodeToString(sum[:]), html.EscapeString(f))
		}
		idx.mu.Unlock()
		if files == nil {
			http.NotFound(w, r)
			return
		}
		b.WriteString("</body></html>\n")
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(b.String()))
	case len(parts) == 2 && parts[0] == "files":
		idx.mu.Lock()
		var data []byte
		for _, files := range idx.files {
			if d, ok := files[parts[1]]; ok {
				data = d
			}
		}
		idx.mu.Unlock()
		if data == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(data)
	default:
		http.NotFound(w, r)
	}
}

// BuildWheel builds a py3-none-any wheel of project at version holding files (path → content)
// and returns its file name and bytes: METADATA, WHEEL and a RECORD with every file's hash.
func BuildWheel(project, version string, files map[string]string, requires ...string) (string, []byte) {
	dist := strings.ReplaceAll(Normalize(project), "-", "_")
	info := fmt.Sprintf("%s-%s.dist-info", dist, version)
	var meta strings.Builder
	fmt.Fprintf(&meta, "Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: test package %s\n", project, version, project)
	for _, r := range requires {
		fmt.Fprintf(&meta, "Requires-Dist: %s\n", r)
	}
	all := map[string]string{}
	for p, c := range files {
		all[p] = c
	}
	all[info+"/METADATA"] = meta.String()
	all[info+"/WHEEL"] = "Wheel-Version: 1.0\nGenerator: robothub-pyindex\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
	paths := make([]string, 0, len(all))
	for p := range all {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var record strings.Builder
	for _, p := range paths {
		fw, _ := zw.Create(p)
		_, _ = fw.Write([]byte(all[p]))
		sum := sha256.Sum256([]byte(all[p]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", p, base64.RawURLEncoding.EncodeToString(sum[:]), len(all[p]))
	}
	fmt.Fprintf(&record, "%s/RECORD,,\n", info)
	fw, _ := zw.Create(info + "/RECORD")
	_, _ = fw.Write([]byte(record.String()))
	_ = zw.Close()
	return fmt.Sprintf("%s-%s-py3-none-any.whl", dist, version), buf.Bytes()
}
