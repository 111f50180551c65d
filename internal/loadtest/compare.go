package loadtest

import (
	"bytes"
	"net/http"
	"os"
	"testing"
	"time"
)

// Comparison is a receiver's figures beside the bare handler's, from one run.
type Comparison struct {
	bareSat, recvSat       WrkResult
	bareSteady, recvSteady RateResult
}

// Compare loads the bare handler at bareURL and the receiver at recvURL alike: each is
// saturated twice, alternating, and keeps its best run (so that a burst of other work on the
// machine does not decide the comparison); then each gets 5,000 requests/s.
func Compare(b *testing.B, body []byte, secret, bareURL, recvURL string) Comparison {
	duration := 5 * time.Second
	if d, err := time.ParseDuration(os.Getenv("ROBOTHUB_LOAD_DURATION")); err == nil {
		duration = d
	}
	post := func(url string) Post {
		return Post{URL: url, Body: body, Header: map[string]string{"Content-Type": "application/json", "X-Webhook-Secret": secret}}
	}
	for _, u := range []string{bareURL, recvURL} {
		req, _ := http.NewRequest("POST", u, bytes.NewReader(body))
		req.Header.Set("X-Webhook-Secret", secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("%s does not answer 200: %v %v", u, err, resp)
		}
		resp.Body.Close()
	}
	var c Comparison
	for range 2 {
		for _, s := range []struct {
			url  string
			best *WrkResult
		}{{bareURL, &c.bareSat}, {recvURL, &c.recvSat}} {
			r, err := Wrk(post(s.url), duration)
			if err != nil {
				b.Skip(err) // no wrk: the load benchmarks need Debian's wrk
			}
			if r.RPS > s.best.RPS {
				*s.best = r
			}
		}
	}
	var err error
	if c.bareSteady, err = AtRateInSubprocess(post(bareURL), 5000, duration); err != nil {
		b.Fatal(err)
	}
	if c.recvSteady, err = AtRateInSubprocess(post(recvURL), 5000, duration); err != nil {
		b.Fatal(err)
	}
	return c
}

func (c Comparison) Report(b *testing.B) {
	for _, r := range []struct {
		name string
		w    WrkResult
		v    RateResult
	}{{"bare", c.bareSat, c.bareSteady}, {"receiver", c.recvSat, c.recvSteady}} {
		b.Logf("%-8s saturated: %7.0f req/s (p99 %s, non-2xx %d) | at 5000 req/s: p50 %s p99 %s, %d errors",
			r.name, r.w.RPS, r.w.P99, r.w.Non2xx, r.v.P50, r.v.P99, r.v.Errors)
		if r.w.Non2xx > 0 || r.v.Errors > 0 {
			b.Errorf("%s answered errors under load", r.name)
		}
	}
	b.ReportMetric(c.recvSat.RPS, "receiver-req/s")
	b.ReportMetric(c.bareSat.RPS, "bare-req/s")
	b.ReportMetric(c.recvSat.RPS/c.bareSat.RPS, "receiver/bare")
	b.ReportMetric(float64(c.recvSteady.P99.Microseconds())/1000, "receiver-p99-ms")
	b.ReportMetric(float64(c.bareSteady.P99.Microseconds())/1000, "bare-p99-ms")
	b.ReportMetric(float64(c.recvSteady.P99)/float64(c.bareSteady.P99), "p99/bare")
}
