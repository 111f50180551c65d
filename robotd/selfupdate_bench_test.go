package robotd_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/robothub/robothub/core/release"
)

// BenchmarkDaemonUpdate: robot-daemon --sim under fakesystemd, coop_app running, updated between
// two signed releases on the local hub (1.0.0 -> 1.1.0 -> 1.0.0 with allow_downgrade ...), each
// update through POST /api/update/start. Per update, from the update record: from the release
// downloaded and checked (the download excluded) to the new daemon READY (update-ready), and from
// the old daemon's last command to the motors to the new one's first (motor-gap).
func BenchmarkDaemonUpdate(b *testing.B) {
	hub := startReleaseHub(b)
	v100, v110 := releaseProgram(b, "1.0.0"), releaseProgram(b, "1.1.0")
	hub.publish(b, "1.0.0", v100)
	hub.publish(b, "1.1.0", v110)
	r := startSupervisedRobot(b, v100, hub)
	r.waitFor(time.Minute, "the robot awake", func() bool { return r.robot().Awake })
	var created struct {
		JobID string `json:"job_id"`
	}
	r.call("POST", "/api/apps/install", map[string]string{"url": testdataApp("coop_app")}, &created)
	r.waitFor(3*time.Minute, "coop_app installed", func() bool {
		var j jobInfo
		r.call("GET", "/api/apps/job-status/"+created.JobID, nil, &j)
		return j.Status == "done"
	})
	if code := r.call("POST", "/api/apps/start-app/coop_app", nil, nil); code != 200 {
		b.Fatalf("start-app: %d", code)
	}
	layout := release.Layout{Dir: filepath.Join(r.dataDir, "releases")}
	var ready, gap []float64
	for i := 0; b.Loop(); i++ {
		query := "?version=1.1.0"
		if i%2 == 1 {
			query = "?version=1.0.0&allow_downgrade=true"
		}
		id := r.startUpdate(query)
		r.waitFor(2*time.Minute, "the update done", func() bool { return release.Finished(r.job(id).Status) })
		if info := r.job(id); info.Status != release.JobDone {
			b.Fatalf("update %s: %+v", query, info)
		}
		rec, err := layout.ReadRecord()
		if err != nil || rec == nil || rec.ID != id {
			b.Fatalf("update record: %+v %v", rec, err)
		}
		ready = append(ready, float64(rec.Ready.Sub(rec.Downloaded))/float64(time.Millisecond))
		gap = append(gap, float64(rec.TookOver.Sub(rec.Released))/float64(time.Millisecond))
		r.waitFor(time.Minute, "coop_app running again", func() bool { _, state := r.appStatus(); return state == "running" })
	}
	b.StopTimer()
	r.call("POST", "/api/apps/stop-current-app", nil, nil)
	r.call("POST", "/api/apps/remove/coop_app", nil, nil)
	slices.Sort(ready)
	slices.Sort(gap)
	b.ReportMetric(ready[len(ready)/2], "update-ready-p50-ms")
	b.ReportMetric(ready[len(ready)-1], "update-ready-max-ms")
	b.ReportMetric(gap[len(gap)-1], "motor-gap-max-ms")
}
