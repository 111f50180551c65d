package job_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/robothub/robothub/core/apps/job"
)

func TestLogLinesAreWholeAndRedacted(t *testing.T) {
	r := &job.Registry{Redact: func(s string) string { return strings.ReplaceAll(s, "s3cret", "xxxxx") }}
	j := r.Create("install", "https://example.com/app", func(error) {})
	fmt.Fprint(j, "Cloning https://user:s3cret@")
	fmt.Fprint(j, "example.com/app\r\nhalf a line")
	if lines, status, _ := j.Follow(0); len(lines) != 1 || lines[0] != "Cloning https://user:xxxxx@example.com/app" || status != job.Pending {
		t.Fatalf("log %q (%s), want the one whole line, redacted", lines, status)
	}
	j.SetStatus(job.Failed, errors.New("pip: s3cret refused"))
	info := j.Info()
	if len(info.Logs) != 2 || info.Logs[1] != "half a line" || *info.Error != "pip: xxxxx refused" || info.Finished == nil {
		t.Fatalf("after failing: %+v", info)
	}
	if err := j.Wait(); err == nil || err.Error() != "pip: xxxxx refused" {
		t.Fatalf("Wait = %v", err)
	}
}

func TestCancelIsRefusedWhileBusyAndAfterTheEnd(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	j := (&job.Registry{}).Create("update", "app", cancel)
	if err := j.BeginUncancellable(); err != nil {
		t.Fatal(err)
	}
	if finished, busy := j.Cancel(); finished || !busy || ctx.Err() != nil {
		t.Fatalf("cancel while busy: finished=%v busy=%v ctx=%v", finished, busy, ctx.Err())
	}
	j.EndUncancellable()
	if finished, busy := j.Cancel(); finished || busy || !errors.Is(context.Cause(ctx), job.ErrCancelled) {
		t.Fatalf("cancel: finished=%v busy=%v cause=%v", finished, busy, context.Cause(ctx))
	}
	if err := j.BeginUncancellable(); !errors.Is(err, job.ErrCancelled) {
		t.Fatalf("a busy step after a cancel: %v", err)
	}
	j.SetStatus(job.Done, nil, "app")
	if finished, _ := j.Cancel(); !finished {
		t.Fatal("a finished job was cancelled again")
	}
}

func TestRegistryForgetsOnlyOldFinishedJobs(t *testing.T) {
	r := &job.Registry{}
	first := r.Create("install", "running", func(error) {})
	first.Expect([]string{"app_a"})
	var done []*job.Job
	for i := range 250 {
		j := r.Create("remove", fmt.Sprint(i), func(error) {})
		j.SetStatus(job.Done, nil)
		done = append(done, j)
	}
	if _, ok := r.Get(first.ID()); !ok {
		t.Fatal("an unfinished job was forgotten")
	}
	if _, ok := r.Get(done[0].ID()); ok {
		t.Fatal("the oldest finished job is still kept beyond the limit")
	}
	if _, ok := r.Get(done[249].ID()); !ok {
		t.Fatal("the newest job was forgotten")
	}
	if got := r.Newest(func(j *job.Job) bool { return j.Brings("app_a", "install", "update") }); got != first {
		t.Fatalf("the job bringing app_a: %v", got)
	}
	if got := r.Newest(func(j *job.Job) bool { return j.Brings("app_a", "update") }); got != nil {
		t.Fatal("an install counted as an update")
	}
}
