package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/hubtest"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/delivery"
	"github.com/robothub/robothub/internal/hubemu/localhub"
	"github.com/robothub/robothub/internal/testkit/loadtest"
)

// TestMain lets testscript run the real program: "exec robothub ..." in a script runs main.
func TestMain(m *testing.M) {
	loadtest.Helper() // the load benchmarks' attacker and bare server
	testscript.Main(m, map[string]func(){"robothub": main})
}

// TestScripts runs testdata/*.txtar. Each script gets its own in-memory hub emulator, with users
// alice (HF_TOKEN, and READ_TOKEN with the read role) and bob (BOB_TOKEN), and these commands:
//
//	receiver start NAME [SECRET] [FAILURES]  a webhook receiver at $URL_NAME that refuses the first FAILURES deliveries
//	receiver wait NAME N                     wait (up to 10 s) until it has handled N payloads
//	receiver count NAME N                    it has handled exactly N payloads now (no pause: see cmdReceiver)
//	receiver show NAME                       print one line per payload: scope action type:name webhook
//	capture VAR                              set $VAR to the last command's stdout, trimmed
//	waitruns WEBHOOK N                       wait (up to 20 s) until the job webhook has N runs, none running
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:   "testdata",
		Setup: setupScriptHub,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"receiver": cmdReceiver,
			"capture": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: capture VAR")
				}
				ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile("stdout")))
			},
			"waitruns": cmdWaitRuns,
		},
	})
}

type scriptReceiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	failures int
	got      []*webhook.Payload
}

func (r *scriptReceiver) payloads() []*webhook.Payload {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*webhook.Payload(nil), r.got...)
}

type scriptState struct {
	mu        sync.Mutex
	receivers map[string]*scriptReceiver
}

func setupScriptHub(env *testscript.Env) error {
	h, err := hubtest.Serve(localhub.Config{
		AllowJobs:       true,
		AllowDeliveryTo: []string{"127.0.0.0/8"}, // the scripts' receivers listen on loopback
		Delivery:        delivery.Policy{Timeout: 2 * time.Second, MaxAttempts: 5, BaseDelay: 20 * time.Millisecond, MaxDelay: 100 * time.Millisecond},
	})
	if err != nil {
		return err
	}
	h.Run()
	env.Defer(func() { h.Close() })
	tokens := map[string][3]string{"HF_TOKEN": {"alice", hubemu.RoleWrite}, "READ_TOKEN": {"alice", hubemu.RoleRead}, "BOB_TOKEN": {"bob", hubemu.RoleWrite}}
	for name, spec := range tokens {
		tok, _, err := h.CreateToken(context.Background(), spec[0], spec[1], "script")
		if err != nil {
			return err
		}
		env.Setenv(name, tok)
	}
	env.Setenv("HF_ENDPOINT", h.URL)
	// A race-enabled binary sleeps a second before it exits, by default; each exec would pay it.
	env.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	env.Setenv("HOME", env.WorkDir)
	env.Values["state"] = &scriptState{receivers: map[string]*scriptReceiver{}}
	return nil
}

func cmdReceiver(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: receiver start|wait|count|show NAME ...")
	}
	st := ts.Value("state").(*scriptState)
	st.mu.Lock()
	r := st.receivers[args[1]]
	st.mu.Unlock()
	if args[0] != "start" && r == nil {
		ts.Fatalf("no receiver %s", args[1])
	}
	switch args[0] {
	case "start":
		secret, failures := "", 0
		if len(args) > 2 {
			secret = args[2]
		}
		if len(args) > 3 {
			failures, _ = strconv.Atoi(args[3])
		}
		r = &scriptReceiver{failures: failures}
		s := webhook.NewServer(webhook.WithSecret(secret), webhook.WithLogger(slog.New(slog.DiscardHandler)))
		err := s.Add("hook", func(ctx context.Context, p *webhook.Payload, h http.Header) (any, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.failures > 0 {
				r.failures--
				return nil, fault.Unavailablef("warming up")
			}
			r.got = append(r.got, p)
			return nil, nil
		})
		ts.Check(err)
		r.srv = httptest.NewServer(s)
		ts.Defer(r.srv.Close)
		st.mu.Lock()
		st.receivers[args[1]] = r
		st.mu.Unlock()
		ts.Setenv("URL_"+args[1], r.srv.URL+"/webhooks/hook")
	case "wait":
		n, _ := strconv.Atoi(args[2])
		deadline := time.Now().Add(10 * time.Second)
		for len(r.payloads()) < n {
			if time.Now().After(deadline) {
				ts.Fatalf("receiver %s has %d payloads after 10 s, want %d", args[1], len(r.payloads()), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	case "count":
		// No wait: a count follows an emit that printed "0 deliveries", and the hub sends only the
		// deliveries it has recorded, so nothing more can arrive later for the receiver to count.
		n, _ := strconv.Atoi(args[2])
		if got := len(r.payloads()); (got == n) == neg {
			ts.Fatalf("receiver %s has %d payloads, want %d", args[1], got, n)
		}
	case "show":
		for _, p := range r.payloads() {
			fmt.Fprintf(ts.Stdout(), "%s %s %s:%s %s\n", p.Event.Scope, p.Event.Action, p.Repo.Type, p.Repo.Name, p.Webhook.ID)
		}
	default:
		ts.Fatalf("unknown receiver command %s", args[0])
	}
}

// cmdWaitRuns waits until a job webhook has N runs that have ended: a job starts in namespaces of
// its own, by this program started again, which takes a moment a script must not race.
func cmdWaitRuns(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitruns WEBHOOK N")
	}
	want, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("waitruns: %v", err)
	}
	var runs []hubemu.JobRun
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		req, _ := http.NewRequest("GET", ts.Getenv("HF_ENDPOINT")+"/api/emulator/webhooks/"+args[0]+"/runs", nil)
		req.Header.Set("Authorization", "Bearer "+ts.Getenv("HF_TOKEN"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			ts.Fatalf("waitruns: %v", err)
		}
		err = json.NewDecoder(resp.Body).Decode(&runs)
		resp.Body.Close()
		if err != nil {
			ts.Fatalf("waitruns: %v", err)
		}
		ended := 0
		for _, r := range runs {
			if r.State != hubemu.RunRunning {
				ended++
			}
		}
		if ended == want && len(runs) == want {
			return
		}
	}
	ts.Fatalf("waitruns: webhook %s has runs %+v, want %d ended", args[0], runs, want)
}
