package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// check (and publish, which runs it) prints each finding as it is made: publish was silent for
// ~20 s and then printed every check at once (issue 24). The user sees the first findings and
// what check is doing before the install into a temporary venv has finished.
func TestCheckShowsItsProgressAsItGoes(t *testing.T) {
	dir := mustCreate(t, "progress_app")
	spec, err := json.Marshal(map[string]any{"Args": []string{"robot-app-assistant", "check", dir},
		"Env": testEnv(t)})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "ROBOT_APP_ASSISTANT_TEST_RUN="+string(spec))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The lines of interest, and when each arrived. Whether the check then passes is other tests'
	// business (it depends on the SDK's dependencies in reach).
	keys := []string{"Checking ", "ok    index.html", "...   building the wheel", "ok    install of "}
	seen := map[string]time.Time{}
	var all []string
	for sc := bufio.NewScanner(out); sc.Scan(); {
		line := sc.Text()
		all = append(all, line)
		for _, key := range keys {
			if strings.HasPrefix(strings.TrimSpace(line), strings.TrimSpace(key)) {
				if _, ok := seen[key]; !ok {
					seen[key] = time.Now()
				}
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Logf("check: %v", err)
	}
	for _, key := range keys {
		if seen[key].IsZero() {
			t.Fatalf("check did not print %q:\n%s", key, strings.Join(all, "\n"))
		}
	}
	// The install into a venv takes seconds: what came before it was on screen meanwhile. Printed
	// at the end, the lines arrive within the same write.
	if gap := seen["ok    install of "].Sub(seen["...   building the wheel"]); gap < 100*time.Millisecond {
		t.Errorf("the first findings arrived only %s before the install's: not as they were made\n%s", gap, strings.Join(all, "\n"))
	}
}
