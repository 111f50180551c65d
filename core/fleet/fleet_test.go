package fleet

import (
	"strings"
	"testing"
	"time"
)

const (
	revA = "1111111111111111111111111111111111111111"
	revB = "2222222222222222222222222222222222222222"
)

func TestTopicsRoundTrip(t *testing.T) {
	var tp Topics
	topic := tp.Wave("local/my_app", 1)
	if topic != "robothub/v1/spaces/local/my_app/wave/1" {
		t.Fatalf("Wave = %s", topic)
	}
	space, k, ok := tp.ParseWave(topic)
	if !ok || space != "local/my_app" || k != 1 {
		t.Fatalf("ParseWave(%s) = %s %d %v", topic, space, k, ok)
	}
	for _, bad := range []string{
		"robothub/v1/spaces/local/my_app/wave/2",    // past MaxWaves
		"robothub/v1/spaces/local/my_app/wave/x",    // not a number
		"robothub/v1/spaces/local/my_app/rollout",   // not a wave
		"robothub/v1/spaces/lo+cal/my_app/wave/0",   // not a space name
		"other/v1/spaces/local/my_app/wave/0",       // another prefix
		"robothub/v1/spaces/local/my_app/x/wave/0",  // too deep
		"robothub/v1/spaces/local/../wave/0/wave/0", // not a space
		"robothub/v1/spaces/local/my_app/wave/-1",   // negative
	} {
		if _, _, ok := tp.ParseWave(bad); ok {
			t.Errorf("ParseWave(%s) accepted it", bad)
		}
	}
	robot, kind, ok := tp.ParseRobot(tp.Status("robot-1"))
	if !ok || robot != "robot-1" || kind != "status" {
		t.Fatalf("ParseRobot = %s %s %v", robot, kind, ok)
	}
	if _, _, ok := tp.ParseRobot("robothub/v1/robots/robot-1/secrets"); ok {
		t.Fatal("ParseRobot accepted an unknown kind")
	}
	// AWS IoT Core: at most 7 slashes and 256 bytes, for the longest names Check allows.
	long := strings.Repeat("a", 96) + "/" + strings.Repeat("b", 96)
	for _, topic := range []string{tp.Wave(long, 1), tp.Rollout(long), tp.Status(strings.Repeat("r", 64))} {
		if n := strings.Count(topic, "/"); n > 7 || len(topic) > 256 {
			t.Errorf("%s: %d slashes, %d bytes: over AWS IoT's limits", topic, n, len(topic))
		}
	}
}

func TestParseUpdateRefusesWhatIsWrong(t *testing.T) {
	good := `{"v":1,"space":"local/my_app","revision":"` + revA + `","time":"2026-01-02T03:04:05Z","rollout":"r1","wave":0,"from":0,"to":10000}`
	u, err := ParseUpdate([]byte(good))
	if err != nil || u.Revision != revA || !u.Covers(9999) || u.Covers(10000) {
		t.Fatalf("ParseUpdate(good) = %+v, %v", u, err)
	}
	for name, tc := range map[string]struct{ from, to, want string }{
		"version":       {`"v":1`, `"v":2`, "version 2"},
		"short rev":     {revA, "1111111", "not a full git commit"},
		"upper rev":     {revA, strings.ToUpper("abcdef") + revA[6:], "not a full git commit"},
		"space":         {"local/my_app", "local/my+app", "space"},
		"no time":       {`"time":"2026-01-02T03:04:05Z",`, "", "time is missing"},
		"range":         {`"to":10000`, `"to":0`, "not a range"},
		"wave":          {`"wave":0`, `"wave":7`, "wave 7"},
		"duplicate key": {`"v":1,`, `"v":1,"v":1,`, "duplicate"},
		"not JSON":      {good, "{", "update message"},
	} {
		_, err := ParseUpdate([]byte(strings.Replace(good, tc.from, tc.to, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one naming %q", name, err, tc.want)
		}
	}
	if _, err := ParseUpdate([]byte(`{"v":1,` + strings.Repeat(" ", MaxMessageBytes) + `}`)); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("an oversized message: err = %v", err)
	}
	// A newer writer's extra field is ignored.
	if _, err := ParseUpdate([]byte(strings.Replace(good, `"v":1`, `"v":1,"note":"x"`, 1))); err != nil {
		t.Errorf("an unknown field: %v", err)
	}
}

func TestBucketsSpreadRobotsEvenly(t *testing.T) {
	const n = 20000
	canary := 0
	for i := range n {
		b := Bucket("robot-" + itoa(i))
		if b < 0 || b >= Buckets {
			t.Fatalf("Bucket = %d", b)
		}
		if b < 1000 {
			canary++
		}
	}
	// 10 % of 20,000 is 2,000; a fair hash stays well within ±10 % of it.
	if canary < 1800 || canary > 2200 {
		t.Fatalf("%d of %d robots in the 10 %% canary buckets", canary, n)
	}
	// Stable across processes, machines and versions: a robot's wave never moves. The figures are
	// SHA-256's first 8 bytes, big-endian, modulo 10,000 (computed apart, with Python's hashlib).
	for id, want := range map[string]int{"robot-7": 167, "sim-00001": 1851} {
		if got := Bucket(id); got != want {
			t.Errorf("Bucket(%q) = %d, want %d", id, got, want)
		}
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

func TestTargetIsTheNewestCoveringWave(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	canary := Update{Revision: revB, Time: t0.Add(time.Hour), From: 0, To: 1000}
	rest := Update{Revision: revA, Time: t0, From: 1000, To: Buckets}
	if u, _ := Target(500, []Update{canary, rest}); u.Revision != revB {
		t.Errorf("a canary robot: %s", u.Revision)
	}
	if u, _ := Target(5000, []Update{canary, rest}); u.Revision != revA {
		t.Errorf("a robot of the rest during the canary: %s, want the previous revision", u.Revision)
	}
	all := Update{Revision: revB, Time: t0.Add(2 * time.Hour), From: 0, To: Buckets}
	if u, _ := Target(5000, []Update{canary, rest, all}); u.Revision != revB {
		t.Errorf("after a plan without canary: %s", u.Revision)
	}
	if _, ok := Target(5000, []Update{canary}); ok {
		t.Error("no wave covers bucket 5000, yet Target found one")
	}
}

func TestPlanEvaluate(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	plan := Plan{Canary: 10, Halt: 0, Wait: time.Minute}
	w := plan.Waves()
	if len(w) != 2 || w[0] != [2]int{0, 1000} || w[1] != [2]int{1000, Buckets} {
		t.Fatalf("Waves = %v", w)
	}
	u := Update{Space: "local/app", Revision: revB, From: 0, To: 1000}
	// Robots in the canary's buckets, and one outside.
	var in []string
	out := ""
	for i := 0; len(in) < 3 || out == ""; i++ {
		id := "r" + itoa(i)
		if Bucket(id) < 1000 {
			in = append(in, id)
		} else if out == "" {
			out = id
		}
	}
	in = in[:3]
	status := func(rev string, last *UpdateResult) Status {
		return Status{Apps: []AppStatus{{Name: "app", Space: "local/app", Revision: rev}}, LastUpdate: last}
	}
	failed := &UpdateResult{Space: "local/app", Revision: revB, Result: ResultFailed}
	st := map[string]Status{in[0]: status(revB, nil), in[1]: status(revA, nil), in[2]: status(revA, nil), out: status(revA, nil)}

	d := plan.Evaluate(u, start, nil, st, start.Add(time.Second))
	if d.Advance || d.Halt || len(d.Pending) != 2 || len(d.Done) != 1 {
		t.Fatalf("two pending: %+v", d)
	}
	st[in[1]], st[in[2]] = status(revB, nil), status(revB, nil)
	if d := plan.Evaluate(u, start, nil, st, start.Add(time.Second)); !d.Advance || len(d.Done) != 3 {
		t.Fatalf("all done: %+v", d)
	}
	st[in[2]] = status(revA, failed)
	if d := plan.Evaluate(u, start, nil, st, start.Add(time.Second)); !d.Halt || d.Failed[0] != in[2] {
		t.Fatalf("one failure with halt=0: %+v", d)
	}
	lenient := Plan{Canary: 10, Halt: 50, Wait: time.Minute}
	if d := lenient.Evaluate(u, start, nil, st, start.Add(time.Second)); !d.Advance || d.Halt {
		t.Fatalf("one failure of three with halt=50: %+v", d)
	}
	// Late robots: after Wait the rollout goes on when some reported, halts when none did.
	st = map[string]Status{in[0]: status(revB, nil), in[1]: status(revA, nil)}
	if d := plan.Evaluate(u, start, nil, st, start.Add(2*time.Minute)); !d.Advance || d.Pending[0] != in[1] {
		t.Fatalf("late after Wait: %+v", d)
	}
	st = map[string]Status{in[0]: status(revA, nil)}
	if d := plan.Evaluate(u, start, nil, st, start.Add(2*time.Minute)); !d.Halt {
		t.Fatalf("none reported after Wait: %+v", d)
	}
	// No canary robot has the app: nothing to wait on, once the statuses had time to come in.
	if d := plan.Evaluate(u, start, nil, map[string]Status{out: status(revA, nil)}, start); d.Advance || d.Halt {
		t.Fatalf("empty canary at once: %+v", d)
	}
	if d := plan.Evaluate(u, start, nil, map[string]Status{out: status(revA, nil)}, start.Add(EmptyCanaryGrace)); !d.Advance {
		t.Fatalf("empty canary after the grace: %+v", d)
	}
}

func TestParsePlan(t *testing.T) {
	q := map[string]string{"canary": "10%", "halt": "20", "wait": "5m"}
	p, err := ParsePlan(func(k string) string { return q[k] })
	if err != nil || p.Canary != 10 || p.Halt != 20 || p.Wait != 5*time.Minute {
		t.Fatalf("ParsePlan = %+v, %v", p, err)
	}
	for k, v := range map[string]string{"canary": "100", "halt": "-1", "wait": "soon"} {
		if _, err := ParsePlan(func(key string) string {
			if key == k {
				return v
			}
			return ""
		}); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: err = %v", k, v, err)
		}
	}
}

func TestSpaceOfAndHubOf(t *testing.T) {
	for src, want := range map[string]string{
		"http://127.0.0.1:7861/spaces/local/my_app":      "local/my_app",
		"https://huggingface.co/spaces/alice/wave.git":   "alice/wave",
		"https://hub.example.com/base/spaces/alice/app/": "alice/app",
		"/home/me/apps/my_app":                           "",
		"git@github.com:alice/app.git":                   "",
		"https://github.com/alice/app":                   "",
	} {
		got, ok := SpaceOf(src)
		if got != want || ok != (want != "") {
			t.Errorf("SpaceOf(%s) = %q %v, want %q", src, got, ok, want)
		}
	}
	if base, _ := HubOf("https://user:pw@hub.example.com/base/spaces/alice/app"); base != "https://hub.example.com/base" {
		t.Errorf("HubOf = %s", base)
	}
}
