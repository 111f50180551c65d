package fleet

import (
	"testing"
)

// FuzzParseUpdate: an update message comes from the broker, so from anyone who may publish on a
// space's topic. Whatever the bytes, ParseUpdate returns a checked message or an error, and a
// message it accepts survives a round trip unchanged.
func FuzzParseUpdate(f *testing.F) {
	f.Add([]byte(`{"v":1,"space":"local/my_app","revision":"` + revA + `","time":"2026-01-02T03:04:05Z","rollout":"r1","wave":0,"from":0,"to":10000}`))
	f.Add([]byte(`{"v":1,"space":"a/b","revision":"` + revB + `","time":"2026-01-02T03:04:05.123456789+02:00","rollout":"x","wave":1,"from":1000,"to":10000,"extra":[1,2]}`))
	f.Add([]byte(`{"v":2}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		u, err := ParseUpdate(data)
		if err != nil {
			return
		}
		if u.Check() != nil || u.From >= u.To {
			t.Fatalf("accepted an update that does not check: %+v", u)
		}
		again, err := Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		u2, err := ParseUpdate(again)
		if err != nil || !u2.Time.Equal(u.Time) || u2.Revision != u.Revision || u2.Space != u.Space || u2.From != u.From || u2.To != u.To {
			t.Fatalf("round trip: %+v -> %s -> %+v, %v", u, again, u2, err)
		}
	})
}

// FuzzParseStatus: statuses come from every robot; fleet ls and the wave controller read them.
func FuzzParseStatus(f *testing.F) {
	f.Add([]byte(`{"v":1,"robot":"robot-1","name":"Robot 1","daemon":"dev","time":"2026-01-02T03:04:05Z","apps":[{"name":"my_app","space":"local/my_app","revision":"` + revA + `"}],"running":"my_app","lastUpdate":{"space":"local/my_app","revision":"` + revA + `","result":"done","time":"2026-01-02T03:04:05Z"}}`))
	f.Add([]byte(`{"v":1,"robot":"../x"}`))
	f.Add([]byte(`{"v":1,"robot":"r","online":true,"since":"2026-01-02T03:04:05Z"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if s, err := ParseStatus(data); err == nil && CheckRobotID(s.Robot) != nil {
			t.Fatalf("accepted robot id %q", s.Robot)
		}
		if p, err := ParsePresence(data); err == nil && CheckRobotID(p.Robot) != nil {
			t.Fatalf("accepted robot id %q", p.Robot)
		}
		if r, err := ParseRollout(data); err == nil && (CheckSpace(r.Space) != nil || CheckRevision(r.Revision) != nil) {
			t.Fatalf("accepted rollout %+v", r)
		}
	})
}
