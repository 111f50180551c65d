package loadtest

import (
	"bytes"
	"cmp"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"
)

// Comparison is a receiver's figures beside the bare handler's, from one run.
type Comparison struct {
	bareSat, recvSat       WrkResult  // the median round's
	ratio                  float64    // the median of the rounds' receiver/bare
	bareSteady, recvSteady RateResult // the median round's
	p99Ratio               float64    // the median of the rounds' receiver/bare p99
}

// rounds is how many times Compare saturates each server, alternating.
const rounds = 5

// Compare loads the bare handler at bareURL and the receiver at recvURL alike, in rounds: in each,
// wrk saturates one then the other, and each figure is the median of the rounds' receiver/bare
// ratios (the two runs of a round share the machine's conditions; the median keeps a burst of other
// work in one round from deciding the comparison). Then the same for latency, each server getting
// 5,000 requests/s in turn. A wrk run lasts the phase (ROBOTHUB_LOAD_DURATION, 5 s), a latency run
// two fifths of it.
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
	type round struct {
		bare, recv WrkResult
		ratio      float64
	}
	var rs []round
	for range rounds {
		var r round
		for _, s := range []struct {
			url string
			res *WrkResult
		}{{bareURL, &r.bare}, {recvURL, &r.recv}} {
			w, err := Wrk(post(s.url), duration)
			if err != nil {
				b.Skip(err) // no wrk: the load benchmarks need Debian's wrk
			}
			*s.res = w
		}
		r.ratio = r.recv.RPS / r.bare.RPS
		b.Logf("round %d: bare %.0f req/s, receiver %.0f req/s: %.3f", len(rs)+1, r.bare.RPS, r.recv.RPS, r.ratio)
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(x, y round) int { return cmp.Compare(x.ratio, y.ratio) })
	median := rs[len(rs)/2]
	c := Comparison{bareSat: median.bare, recvSat: median.recv, ratio: median.ratio}
	for _, r := range rs {
		c.bareSat.Non2xx, c.recvSat.Non2xx = max(c.bareSat.Non2xx, r.bare.Non2xx), max(c.recvSat.Non2xx, r.recv.Non2xx)
	}
	// The same for latency: rounds of 5,000 requests/s, alternating, the median of the p99 ratios.
	type steady struct {
		bare, recv RateResult
		ratio      float64
	}
	var ss []steady
	for range rounds {
		var r steady
		var err error
		if r.bare, err = AtRateInSubprocess(post(bareURL), 5000, 2*duration/rounds); err != nil {
			b.Fatal(err)
		}
		if r.recv, err = AtRateInSubprocess(post(recvURL), 5000, 2*duration/rounds); err != nil {
			b.Fatal(err)
		}
		r.ratio = float64(r.recv.P99) / float64(r.bare.P99)
		b.Logf("round %d at 5000 req/s: p99 bare %s, receiver %s: %.2f", len(ss)+1, r.bare.P99, r.recv.P99, r.ratio)
		ss = append(ss, r)
	}
	slices.SortFunc(ss, func(x, y steady) int { return cmp.Compare(x.ratio, y.ratio) })
	c.bareSteady, c.recvSteady, c.p99Ratio = ss[len(ss)/2].bare, ss[len(ss)/2].recv, ss[len(ss)/2].ratio
	for _, r := range ss {
		c.bareSteady.Errors, c.recvSteady.Errors = max(c.bareSteady.Errors, r.bare.Errors), max(c.recvSteady.Errors, r.recv.Errors)
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
	b.ReportMetric(c.ratio, "receiver/bare")
	b.ReportMetric(float64(c.recvSteady.P99.Microseconds())/1000, "receiver-p99-ms")
	b.ReportMetric(float64(c.bareSteady.P99.Microseconds())/1000, "bare-p99-ms")
	b.ReportMetric(c.p99Ratio, "p99/bare")
}
