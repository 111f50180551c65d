package robotd_test

import (
	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/fault"
)

// CancelJob cancels an in-memory job as the manager does: its jobs end at once, so a job found
// is one that has finished, which the manager refuses to cancel.
func (m *memApps) CancelJob(id string) (apps.JobInfo, error) {
	m.mu.Lock()
	j, ok := m.jobs[id]
	m.mu.Unlock()
	if !ok {
		return apps.JobInfo{}, fault.NotFoundf("Job %s not found", id)
	}
	info := j.Info()
	if !info.Status.Finished() {
		j.finish(apps.ErrCancelled)
		return j.Info(), nil
	}
	return apps.JobInfo{}, fault.Refusedf("Job %s has already finished (%s)", id, info.Status)
}

// Warnings: an in-memory manager reads no state files.
func (m *memApps) Warnings() []string { return nil }
