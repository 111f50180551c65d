package machineid_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/robothub/robothub/internal/machineid"
)

// Two machines' ids differ, one machine's is stable and does not show its machine-id; a source
// that is missing, empty or not yet made at first boot is passed over for the next.
func TestIDIsStableUniqueAndHashed(t *testing.T) {
	dir := t.TempDir()
	write := func(name, value string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(value), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a", "4f1c2a9e0b7d4e36a1c5b8d2e9f07a13\n")
	b := write("b", "9d0e6b3c1a2f4d5e8b7c6a5d4e3f2a1b\n")
	idA, src := machineid.From(a)
	if len(idA) != 16 || src != a {
		t.Fatalf("id %q from %q", idA, src)
	}
	if again, _ := machineid.From(a); again != idA {
		t.Fatalf("the id changed between reads: %q, %q", idA, again)
	}
	if idB, _ := machineid.From(b); idB == idA {
		t.Fatalf("two machine-ids gave one id %q", idA)
	}
	if idA == "4f1c2a9e0b7d4e36" {
		t.Fatal("the id shows the machine-id")
	}
	empty, uninit, serial := write("empty", "\n"), write("uninit", "uninitialized\n"), write("serial", "10000000abcdef01\x00")
	if id, src := machineid.From(filepath.Join(dir, "missing"), empty, uninit, serial); src != serial || id == "" {
		t.Fatalf("id %q from %q, want one from the serial number", id, src)
	}
	if id, src := machineid.From(empty); id != "" || src != "" {
		t.Fatalf("an empty source gave %q from %q", id, src)
	}
}
