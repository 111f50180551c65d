package spaces

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// planReference is the planner as it was before it was made linear (each operation scanned every
// file): the rules the linear one must keep.
func planReference(parent []TreeEntry, ops []commitOp) (map[string]string, error) {
	files := map[string]string{}
	for _, e := range parent {
		if e.Type == "blob" || e.Type == "commit" {
			files[e.Path] = e.Mode
		}
	}
	isDir := func(p string) bool {
		for f := range files {
			if strings.HasPrefix(f, p+"/") {
				return true
			}
		}
		return false
	}
	modes := map[string]string{}
	for _, op := range ops {
		switch op.kind {
		case "deletedFile":
			if _, ok := files[op.path]; !ok {
				if isDir(op.path) {
					return nil, errors.New("folder: " + op.path)
				}
				return nil, errors.New("no file: " + op.path)
			}
			delete(files, op.path)
		case "deletedFolder":
			if !isDir(op.path) {
				return nil, errors.New("no folder: " + op.path)
			}
			for f := range files {
				if strings.HasPrefix(f, op.path+"/") {
					delete(files, f)
				}
			}
		case "file":
			if isDir(op.path) {
				return nil, errors.New("is a folder: " + op.path)
			}
			for dir := op.path; ; {
				i := strings.LastIndexByte(dir, '/')
				if i < 0 {
					break
				}
				dir = dir[:i]
				if _, ok := files[dir]; ok {
					return nil, errors.New("parent is a file: " + op.path)
				}
			}
			mode := "100644"
			if files[op.path] == "100755" {
				mode = "100755"
			}
			files[op.path], modes[op.path] = mode, mode
		}
	}
	return modes, nil
}

// TestPlanAgreesWithTheRules plays random commits on random trees through both planners: the same
// modes, and a refusal exactly when the reference refuses.
func TestPlanAgreesWithTheRules(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "b", "c"}
	path := func() string {
		depth := 1 + r.IntN(3)
		segs := make([]string, depth)
		for i := range segs {
			segs[i] = names[r.IntN(len(names))]
		}
		return strings.Join(segs, "/")
	}
	for round := range 20000 {
		var parent []TreeEntry
		seen := map[string]bool{}
		for range r.IntN(6) {
			p := path()
			clash := false
			for q := range seen {
				if q == p || strings.HasPrefix(q, p+"/") || strings.HasPrefix(p, q+"/") {
					clash = true
				}
			}
			if clash {
				continue
			}
			seen[p] = true
			mode, typ := "100644", "blob"
			switch r.IntN(4) {
			case 0:
				mode = "100755"
			case 1:
				mode, typ = "160000", "commit"
			}
			parent = append(parent, TreeEntry{Path: p, Mode: mode, Type: typ})
		}
		var ops []commitOp
		for range 1 + r.IntN(6) {
			ops = append(ops, commitOp{kind: []string{"file", "file", "deletedFile", "deletedFolder"}[r.IntN(4)], path: path()})
		}
		want, wantErr := planReference(parent, ops)
		got, err := planCommit(context.Background(), parent, ops)
		if (err != nil) != (wantErr != nil) || (err == nil && !reflect.DeepEqual(got, want)) {
			t.Fatalf("round %d: parent %v ops %v: got %v %v, want %v %v", round, parent, ops, got, err, want, wantErr)
		}
	}
}

func TestPlanStopsWhenTheClientGoesAway(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ops := make([]commitOp, 10)
	for i := range ops {
		ops[i] = commitOp{kind: "file", path: fmt.Sprintf("f%d", i)}
	}
	if _, err := planCommit(ctx, nil, ops); !errors.Is(err, context.Canceled) {
		t.Fatalf("planned for a client that went away: %v", err)
	}
}
