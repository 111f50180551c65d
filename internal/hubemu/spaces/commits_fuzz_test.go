package spaces

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/robothub/robothub/core/fault"
)

// FuzzParseCommit feeds arbitrary bytes to the commit API's NDJSON reader: it never panics, refuses
// with an error of the invalid kind (a 400), and what it accepts has a header, checked paths, and
// contents that are in the spool file where the operations say.
func FuzzParseCommit(f *testing.F) {
	for _, seed := range []string{
		`{"key":"header","value":{"summary":"m","description":""}}` + "\n" + `{"key":"file","value":{"path":"a/b.txt","content":"aGk=","encoding":"base64"}}` + "\n",
		`{"key":"header","value":{"summary":"m","parentCommit":"0123456"}}` + "\n" + `{"key":"deletedFolder","value":{"path":"x/"}}`,
		`{"key":"header","value":{"summary":"m"}}` + "\n" + `{"key":"deletedFile","value":{"path":"./x"}}` + "\n\n",
		`{"key":"file","value":{}}`,
		`{"key":"header","value":{"summary":"m"}}` + "\n" + `{"key":"lfsFile","value":{"path":"w"}}`,
		"\n\n",
		`{"key":"header","value":{"summary":"m"}}` + "\n" + `{"key":"file","value":{"path":".GIT/x","content":"","encoding":"utf-8"}}`,
	} {
		f.Add([]byte(seed))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseCommit(bytes.NewReader(body), dir)
		if err != nil {
			if !errors.Is(err, fault.ErrInvalid) {
				t.Fatalf("refused with %v, not an invalid-request error", err)
			}
			return
		}
		defer req.close()
		if strings.TrimSpace(req.summary) == "" {
			t.Fatal("accepted without a summary")
		}
		for _, op := range req.ops {
			if p, err := CheckRepoPath(op.path); err != nil || p != op.path {
				t.Fatalf("accepted path %q: %v", op.path, err)
			}
			if op.kind == "file" {
				if _, err := io.ReadAll(io.NewSectionReader(req.spool, op.offset, op.size)); err != nil || op.size > MaxInlineFileBytes {
					t.Fatalf("file %q at %d+%d: %v", op.path, op.offset, op.size, err)
				}
			}
		}
	})
}
