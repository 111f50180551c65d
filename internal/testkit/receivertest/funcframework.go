package receivertest

import (
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/GoogleCloudPlatform/functions-framework-go/funcframework"
)

// StartFuncframework serves the registered functions with funcframework, as Google's runtime
// does (set FUNCTION_TARGET first), on a free loopback port, and returns its base URL once
// /healthz answers. The framework cannot be stopped: it serves until the test binary exits.
func StartFuncframework(t testing.TB) string {
	t.Helper()
	port := FreePort(t)
	failed := make(chan error, 1)
	go func() { failed <- funcframework.StartHostPort("127.0.0.1", port) }()
	base := "http://127.0.0.1:" + port
	WaitHealthy(t, base, failed)
	return base
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

// WaitHealthy waits up to 10 seconds for base/healthz to answer 200, failing early on an error
// from failed (the server stopped).
func WaitHealthy(t testing.TB, base string, failed <-chan error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case err := <-failed:
			t.Fatalf("the server at %s stopped: %v", base, err)
		default:
		}
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/healthz did not answer within 10s", base)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
