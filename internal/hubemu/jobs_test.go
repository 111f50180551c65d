package hubemu_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/wait"

	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
)

func TestJobWebhookRunsTheJobWithPayloadAndWebhookSecrets(t *testing.T) {
	t.Setenv("HF_TOKEN", "hf_emulator_own_token") // the emulator's environment must not reach jobs
	h := newTestHub(t, localhub.Config{AllowJobs: true})
	script := `echo "repo=$WEBHOOK_REPO_TYPE:$WEBHOOK_REPO_ID"; echo "secret=$WEBHOOK_SECRET"; echo "A=${A:-unset} B=${B:-unset}";` +
		` echo "own=${JOB_OWN:-unset} hf=${HF_TOKEN:-unset} mode=$MODE"; printf '%s' "$WEBHOOK_PAYLOAD" > payload.json; cat payload.json >&2`
	var job struct{ ID string }
	h.mustCall("POST", "/api/emulator/jobs", h.token, map[string]any{
		"command":     []string{"sh", "-c", script},
		"environment": map[string]string{"MODE": "test"},
		"secrets":     map[string]string{"JOB_OWN": "job-only"},
	}, 200, &job)
	wh := h.createWebhook(h.token, map[string]any{"jobSourceId": job.ID, "watched": watch("dataset:alice/data"),
		"secret": "wh-secret", "secrets": map[string]string{"A": "alpha", "B": "beta"}})
	// Remove B: the run must not see it.
	h.mustCall("POST", "/api/settings/webhooks/"+wh.ID, h.token, map[string]any{"jobSourceId": job.ID, "secrets": map[string]string{"B": ""}}, 200, nil)

	h.emit(h.token, hubemu.EmitInput{Repo: "dataset:alice/data", Scope: "repo.content", Action: "update"})
	var runs []hubemu.JobRun
	wait.For(t, 10*time.Second, "the job run to finish", func() bool {
		h.mustCall("GET", "/api/emulator/webhooks/"+wh.ID+"/runs", h.token, nil, 200, &runs)
		return len(runs) == 1 && runs[0].State != hubemu.RunRunning
	})
	var run hubemu.JobRun
	h.mustCall("GET", "/api/emulator/runs/"+runs[0].ID, h.token, nil, 200, &run)
	if run.State != hubemu.RunCompleted || run.ExitCode == nil || *run.ExitCode != 0 {
		t.Fatalf("run %+v", run)
	}
	for _, want := range []string{"repo=dataset:alice/data", "secret=wh-secret", "A=alpha B=unset", "own=unset hf=unset mode=test"} {
		if !strings.Contains(run.Log, want) {
			t.Errorf("log lacks %q:\n%s", want, run.Log)
		}
	}
	i := strings.Index(run.Log, "{")
	p, err := webhook.Parse([]byte(run.Log[i:]))
	if err != nil || p.Webhook.ID != wh.ID || p.Repo.Name != "alice/data" {
		t.Fatalf("WEBHOOK_PAYLOAD %v: %s", err, run.Log[i:])
	}

	a := h.activity(h.token, wh.ID)
	if d := a.Deliveries[0]; d.State != hubemu.StateDelivered || d.Attempts[0].JobRunID != run.ID || d.Attempts[0].Target != "job "+job.ID {
		t.Fatalf("activity %+v", d)
	}
}

func TestFailingAndSlowJobs(t *testing.T) {
	h := newTestHub(t, localhub.Config{AllowJobs: true, JobTimeout: 300 * time.Millisecond})
	mk := func(cmd ...string) string {
		var job struct{ ID string }
		h.mustCall("POST", "/api/emulator/jobs", h.token, map[string]any{"command": cmd}, 200, &job)
		wh := h.createWebhook(h.token, map[string]any{"jobSourceId": job.ID, "watched": watch("model:alice/" + job.ID)})
		h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/" + job.ID, Scope: "repo.content", Action: "update"})
		return wh.ID
	}
	cases := []struct {
		id, err string
		exit    int
	}{
		{mk("sh", "-c", "echo failing; exit 3"), "exited with status 3", 3},
		{mk("sh", "-c", "sleep 30 & wait"), "timeout", -1},
		{mk("/does/not/exist"), "could not start", -1},
	}
	for _, c := range cases {
		var runs []hubemu.JobRun
		wait.For(t, 10*time.Second, "the run of "+c.id, func() bool {
			h.mustCall("GET", "/api/emulator/webhooks/"+c.id+"/runs", h.token, nil, 200, &runs)
			return len(runs) == 1 && runs[0].State != hubemu.RunRunning
		})
		if r := runs[0]; r.State != hubemu.RunError || !strings.Contains(r.Error, c.err) || (c.exit >= 0 && (r.ExitCode == nil || *r.ExitCode != c.exit)) {
			b, _ := json.Marshal(r)
			t.Errorf("run %s, want error %q", b, c.err)
		}
		a := h.activity(h.token, c.id)
		if d := a.Deliveries[0]; d.State != hubemu.StateFailed || d.AttemptCount != 1 {
			t.Errorf("delivery %+v: a failed job is not retried", d)
		}
	}
}

func TestPendingDeliveriesFollowAWebhookTurnedIntoAJob(t *testing.T) {
	h := newTestHub(t, localhub.Config{AllowJobs: true})
	h.stop() // the delivery stays pending while the webhook changes
	wh := h.createWebhook(h.token, map[string]any{"url": "http://127.0.0.1:1/nowhere", "watched": watch("user:alice")})
	h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo.content", Action: "update"})
	var job struct{ ID string }
	h.mustCall("POST", "/api/emulator/jobs", h.token, map[string]any{"command": []string{"sh", "-c", "echo ran for $WEBHOOK_REPO_ID"}}, 200, &job)
	h.mustCall("POST", "/api/settings/webhooks/"+wh.ID, h.token, map[string]any{"jobSourceId": job.ID}, 200, nil)
	h.start()
	var runs []hubemu.JobRun
	wait.For(t, 10*time.Second, "the job run", func() bool {
		h.mustCall("GET", "/api/emulator/webhooks/"+wh.ID+"/runs", h.token, nil, 200, &runs)
		return len(runs) == 1 && runs[0].State == hubemu.RunCompleted
	})
	a := h.activity(h.token, wh.ID)
	if d := a.Deliveries[0]; d.State != hubemu.StateDelivered || d.AttemptCount != 1 || d.Attempts[0].Target != "job "+job.ID {
		t.Fatalf("delivery %+v", d)
	}
}
