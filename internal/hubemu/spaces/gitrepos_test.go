package spaces

import (
	"reflect"
	"testing"
)

func TestDiffRefs(t *testing.T) {
	before := map[string]string{"refs/heads/main": "a1", "refs/heads/dev": "b1", "refs/tags/v1": "c1"}
	after := map[string]string{"refs/heads/main": "a2", "refs/tags/v1": "c1", "refs/heads/new": "d1"}
	want := []refChange{
		{Ref: "refs/heads/dev", Old: "b1", New: ""},
		{Ref: "refs/heads/main", Old: "a1", New: "a2"},
		{Ref: "refs/heads/new", Old: "", New: "d1"},
	}
	if got := diffRefs(before, after); !reflect.DeepEqual(got, want) {
		t.Fatalf("diffRefs = %+v, want %+v", got, want)
	}
	if got := diffRefs(after, after); len(got) != 0 {
		t.Fatalf("no change gave %+v", got)
	}
}
