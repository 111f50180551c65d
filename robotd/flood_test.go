package robotd_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// floodSpec is what the flood process is told: whom to flood, with how many connections at once,
// for how long.
type floodSpec struct {
	Addr     string        `json:"addr"`
	Conns    int           `json:"conns"`
	Duration time.Duration `json:"duration"`
}

// runFlood is the other user's side of TestConnectionFloodOfAnotherUser: spec.Conns connections at
// once, each sending a request without a token and reading the answer, again and again until
// spec.Duration has passed. It prints how many answers of each status came back.
func runFlood(spec floodSpec) int {
	var mu sync.Mutex
	statuses := map[string]int{}
	stop := time.Now().Add(spec.Duration)
	var wg sync.WaitGroup
	for range spec.Conns {
		wg.Go(func() {
			for time.Now().Before(stop) {
				status := "error"
				if c, err := net.DialTimeout("tcp", spec.Addr, 5*time.Second); err == nil {
					_ = c.SetDeadline(time.Now().Add(30 * time.Second))
					fmt.Fprintf(c, "GET /api/apps/list HTTP/1.1\r\nHost: %s\r\n\r\n", spec.Addr)
					if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
						status = strconv.Itoa(resp.StatusCode)
						_, _ = io.Copy(io.Discard, resp.Body)
					}
					c.Close()
				}
				mu.Lock()
				statuses[status]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	_ = json.NewEncoder(os.Stdout).Encode(statuses)
	return 0
}

// memoryKB reads a field (VmRSS, VmHWM) of /proc/<pid>/status, in kB.
func memoryKB(t *testing.T, pid int, field string) int {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return kb
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// Issue 20, item 3, through the built daemon: another local user (nobody) floods it with 2,000
// connections at once, none with a token. The daemon's own user keeps being served quickly through
// its socket, the daemon's memory stays bounded, and the flood is refused (401 for those let in,
// 503 over the caps of loopback's address). Before the caps, the daemon read all of /proc/net/tcp
// for each connection: 45 MB grew to 1.39 GB, and the owner's calls stalled for seconds.
func TestConnectionFloodOfAnotherUser(t *testing.T) {
	needOtherUser(t)
	d := startDaemonBinary(t)
	exe := nobodyExecutable(t)

	const conns, duration = 2000, 10 * time.Second
	flood := nobodyRun(t, exe, "ROBOTD_TEST_FLOOD", floodSpec{Addr: strings.TrimPrefix(d.url, "http://"), Conns: conns, Duration: duration})
	var out strings.Builder
	flood.Stdout, flood.Stderr = &out, &out
	rssBefore := memoryKB(t, d.pid, "VmRSS")
	if err := flood.Start(); err != nil {
		t.Fatal(err)
	}
	floodDone := make(chan error, 1)
	go func() { floodDone <- flood.Wait() }()

	// The owner's calls during the flood, each on a new connection (as curl makes them), through the
	// owner's socket: the TCP caps, which the flood fills, are the address's, and the kernel tells
	// the daemon who connected to the socket.
	owner := ownerSocketClient(filepath.Join(d.dataDir, "daemon.sock"))
	owner.Transport.(*http.Transport).DisableKeepAlives = true
	var lat []time.Duration
	for done := false; !done; {
		select {
		case err := <-floodDone:
			if err != nil {
				t.Fatalf("the flood failed: %v\n%s", err, out.String())
			}
			done = true
			continue
		default:
		}
		start := time.Now()
		resp, err := owner.Get("http://localhost/api/apps/list")
		if err != nil {
			t.Fatalf("the owner's call during the flood: %v", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("the owner's call during the flood: %d", resp.StatusCode)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	peak := memoryKB(t, d.pid, "VmHWM")
	var statuses map[string]int
	if err := json.Unmarshal([]byte(out.String()), &statuses); err != nil {
		t.Fatalf("flood output: %q", out.String())
	}
	t.Logf("%d connections of nobody for %v: answers %v; the owner's %d calls: p50 %v, p99 %v; daemon RSS %d kB before, peak %d kB",
		conns, duration, statuses, len(lat), p50, p99, rssBefore, peak)
	if p99 > 2*time.Second {
		t.Errorf("the owner's calls: p99 %v during the flood, want at most 2 s", p99)
	}
	if peak > 200<<10 {
		t.Errorf("the daemon's peak RSS is %d kB during the flood, want at most 200 MB", peak)
	}
	for status, n := range statuses {
		if status != "401" && status != "503" && n > conns/100 {
			t.Errorf("%d flood requests answered %s, want 401 or 503", n, status)
		}
	}
	if statuses["401"] == 0 || statuses["503"] == 0 {
		t.Errorf("flood answers %v: want 401 for those let in and 503 over the cap", statuses)
	}
}
