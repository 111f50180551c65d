package python

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/robothub/robothub/core/apps"
)

// An index that cannot be reached is found out once, said in one line with the way around it, and
// pip does not retry it: its retries were most of a first start with no network (34-48 s).
func TestUnreachableIndexIsSaidOnceAndNotRetried(t *testing.T) {
	v := venvForTest(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	index := "http://user:hunter2@" + ln.Addr().String() + "/simple" // a port nothing listens on, once closed
	ln.Close()
	v.Source = Source{IndexURL: index}
	for i := range 2 {
		var log strings.Builder
		_, err := v.Resolve(context.Background(), &log, apps.Resolution{Requirements: []string{"missing-dep>=1"}, Dir: t.TempDir()})
		if err == nil {
			t.Fatal("resolving from an unreachable index succeeded")
		}
		wantLine := "the package index http://xxxxx@" + ln.Addr().String() + "/simple cannot be reached ("
		if n := strings.Count(log.String(), "The package index http://xxxxx@"+ln.Addr().String()+"/simple cannot be reached ("); n != 1 {
			t.Errorf("resolution %d: the log says %d times that the index cannot be reached, want once:\n%s", i+1, n, log.String())
		}
		for _, want := range []string{wantLine, "use the system's packages (--python /usr/bin/python3 --system-site-packages) or wheel directories (--offline --wheel-dir DIR)"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("resolution %d: the error %q does not say %q", i+1, err, want)
			}
		}
		if strings.Contains(log.String(), "Retrying") {
			t.Errorf("resolution %d: pip retried the unreachable index:\n%s", i+1, log.String())
		}
		if strings.Contains(log.String()+err.Error(), "hunter2") {
			t.Errorf("resolution %d: the index's password shows", i+1)
		}
	}
}
