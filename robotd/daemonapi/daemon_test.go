package daemonapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/internal/testkit/apitest"
	"github.com/robothub/robothub/robotd/daemonapi"
)

func newDaemon(t *testing.T, a *fakeApps, rb *fakeRobot, dataDir string) http.Handler {
	t.Helper()
	return routes(daemonapi.New(daemonapi.Config{Apps: a, Robot: rb, Version: "9.9.9", Sim: true, LoopbackOnly: true, DataDir: dataDir}))
}

func TestStatusReportsTheRobotAndTheApps(t *testing.T) {
	a := &fakeApps{startup: "hello", slot: apps.SlotInfo{State: "local_app", Holder: "hello"},
		sessions: []apps.SessionInfo{{ID: "s1", Kind: "remote", Client: "robot_sdk/1.0", TTL: 10}}}
	rb := &fakeRobot{mode: robot.MotorsEnabled, awake: true}
	code, st := call(t, newDaemon(t, a, rb, t.TempDir()), "GET", "/api/daemon/status", "")
	if code != http.StatusOK {
		t.Fatalf("status: %d %v", code, st)
	}
	want := map[string]any{"type": "daemon_status", "state": "running", "robot_name": "robot", "version": "9.9.9",
		"sdk_version": "1.2.3", "backend": "sim", "robot_awake": true, "loopback_only": true, "simulation_enabled": true,
		"startup_app": "hello", "apps_venv": "/venvs/apps", "stop_timeout": 3.0, "hardware": nil}
	for k, v := range want {
		if st[k] != v {
			t.Errorf("%s: got %#v, want %#v", k, st[k], v)
		}
	}
	if slot, _ := st["slot"].(map[string]any); slot["state"] != "local_app" || slot["holder"] != "hello" {
		t.Errorf("slot: %v", st["slot"])
	}
	if s, _ := st["sessions"].([]any); len(s) != 1 {
		t.Errorf("sessions: %v", st["sessions"])
	}
	// No warnings is an empty list, never null: the dashboard iterates it.
	if w, ok := st["warnings"].([]any); !ok || len(w) != 0 {
		t.Errorf("warnings: %#v, want []", st["warnings"])
	}
	bs, _ := st["backend_status"].(map[string]any)
	if bs["ready"] != true || bs["motor_control_mode"] != "enabled" || bs["error"] != nil {
		t.Errorf("backend_status: %v", bs)
	}
}

func TestStatusSaysWhenTheMotorBusIsDown(t *testing.T) {
	why := "open /dev/ttyACM0: no such file or directory"
	rb := &fakeRobot{mode: robot.MotorsEnabled, hw: &robot.HardwareStatus{Port: "/dev/ttyACM0", Error: &why}}
	_, st := call(t, newDaemon(t, &fakeApps{slot: apps.SlotInfo{State: "free"}}, rb, ""), "GET", "/api/daemon/status", "")
	bs, _ := st["backend_status"].(map[string]any)
	if bs["ready"] != false || bs["error"] != why {
		t.Errorf("backend_status: %v, want not ready with %q", bs, why)
	}
	if hw, _ := st["hardware"].(map[string]any); hw["port"] != "/dev/ttyACM0" {
		t.Errorf("hardware: %v", st["hardware"])
	}
	if st["startup_app"] != nil {
		t.Errorf("startup_app: %v, want null when none is set", st["startup_app"])
	}
}

func state(t *testing.T, h http.Handler) string {
	t.Helper()
	_, st := call(t, h, "GET", "/api/daemon/status", "")
	s, _ := st["state"].(string)
	return s
}

func TestStopAndStartTheRobotsControl(t *testing.T) {
	rb := &fakeRobot{mode: robot.MotorsEnabled, awake: true}
	h := newDaemon(t, &fakeApps{}, rb, "")

	code, body := call(t, h, "POST", "/api/daemon/stop", "")
	apitest.WantDetail(t, code, body, http.StatusUnprocessableEntity, "query parameter goto_sleep is required: true or false")
	code, body = call(t, h, "POST", "/api/daemon/stop?goto_sleep=maybe", "")
	apitest.WantDetail(t, code, body, http.StatusUnprocessableEntity, "goto_sleep: must be true or false")
	if got := state(t, h); got != "running" || rb.MotorMode() != robot.MotorsEnabled {
		t.Fatalf("after refused stops: state %s, motors %s; want running, enabled", got, rb.MotorMode())
	}

	code, body = call(t, h, "POST", "/api/daemon/stop?goto_sleep=false", "")
	if code != http.StatusOK || body["state"] != "stopped" {
		t.Fatalf("stop: %d %v", code, body)
	}
	if got := state(t, h); got != "stopped" || rb.MotorMode() != robot.MotorsDisabled {
		t.Fatalf("after stop: state %s, motors %s; want stopped, disabled", got, rb.MotorMode())
	}

	code, body = call(t, h, "POST", "/api/daemon/start", "")
	apitest.WantDetail(t, code, body, http.StatusUnprocessableEntity, "query parameter wake_up is required")
	if got := state(t, h); got != "stopped" {
		t.Fatalf("a refused start changed the state to %s", got)
	}
	code, body = call(t, h, "POST", "/api/daemon/start?wake_up=false", "")
	if code != http.StatusOK || body["state"] != "running" || rb.wakeUps != 0 {
		t.Fatalf("start without wake-up: %d %v, %d wake-ups", code, body, rb.wakeUps)
	}
	call(t, h, "POST", "/api/daemon/stop?goto_sleep=false", "")
	code, body = call(t, h, "POST", "/api/daemon/start?wake_up=true", "")
	if code != http.StatusOK || body["state"] != "running" || rb.wakeUps != 1 || state(t, h) != "running" {
		t.Fatalf("start with wake-up: %d %v, %d wake-ups", code, body, rb.wakeUps)
	}

	call(t, h, "POST", "/api/daemon/stop?goto_sleep=false", "")
	code, body = call(t, h, "POST", "/api/daemon/restart", "")
	if code != http.StatusOK || body["state"] != "running" || rb.wakeUps != 2 || rb.MotorMode() != robot.MotorsEnabled {
		t.Fatalf("restart: %d %v, %d wake-ups, motors %s", code, body, rb.wakeUps, rb.MotorMode())
	}
}

func TestStopThatFailsLeavesTheControlRunning(t *testing.T) {
	rb := &fakeRobot{mode: robot.MotorsEnabled, modeErr: fault.Unavailablef("the motor bus is not connected")}
	h := newDaemon(t, &fakeApps{}, rb, "")
	code, body := call(t, h, "POST", "/api/daemon/stop?goto_sleep=false", "")
	apitest.WantDetail(t, code, body, http.StatusServiceUnavailable, "the motor bus is not connected")
	if got := state(t, h); got != "running" {
		t.Fatalf("state %s after a failed stop, want running", got)
	}
}

// A client that leaves while the robot lays its head down has not stopped the control.
func TestStopWithSleepWhoseClientLeaves(t *testing.T) {
	rb := &fakeRobot{mode: robot.MotorsEnabled}
	h := newDaemon(t, &fakeApps{}, rb, "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/api/daemon/stop?goto_sleep=true", nil).WithContext(ctx))
	if rb.sleeps != 1 {
		t.Fatalf("the robot was sent to sleep %d times, want 1", rb.sleeps)
	}
	if got := state(t, h); got != "running" {
		t.Fatalf("state %s, want running: the stop never finished", got)
	}
}

func TestRobotName(t *testing.T) {
	dir := t.TempDir()
	h := newDaemon(t, &fakeApps{}, &fakeRobot{}, dir)
	if code, body := call(t, h, "GET", "/api/daemon/robot-name", ""); code != http.StatusOK || body["name"] != daemonapi.DefaultRobotName {
		t.Fatalf("default name: %d %v", code, body)
	}
	code, body := call(t, h, "POST", "/api/daemon/robot-name", `{"name": "  Kitchen robot "}`)
	if code != http.StatusOK || body["name"] != "Kitchen robot" {
		t.Fatalf("set name: %d %v", code, body)
	}
	for _, bad := range []struct{ body, status, detail string }{
		{``, "422", "body: a JSON object is required"},
		{`{"name": `, "422", "body: invalid JSON"},
		{`{}`, "422", "body: field name is required: the robot's display name, 1 to 64 characters"},
		{`{"name": 7}`, "422", "body: field name: expected string"},
		{`{"name": "   "}`, "422", "name: 1 to 64 characters on one line"},
		{`{"name": "two\nlines"}`, "422", "name: 1 to 64 characters on one line"},
		{`{"name": "` + strings.Repeat("é", 65) + `"}`, "422", "name: 1 to 64 characters on one line"},
	} {
		code, body := call(t, h, "POST", "/api/daemon/robot-name", bad.body)
		apitest.WantDetail(t, code, body, http.StatusUnprocessableEntity, bad.detail)
	}
	// 64 characters of two bytes each are a name: the limit counts characters.
	long := strings.Repeat("é", 64)
	if code, body := call(t, h, "POST", "/api/daemon/robot-name", `{"name": "`+long+`"}`); code != http.StatusOK || body["name"] != long {
		t.Fatalf("64 characters: %d %v", code, body)
	}
	if _, body := call(t, h, "GET", "/api/daemon/robot-name", ""); body["name"] != long {
		t.Fatalf("name after the refused ones: %v", body)
	}
	// The name is kept for the next run, and the status and mDNS read it.
	h2 := newDaemon(t, &fakeApps{}, &fakeRobot{}, dir)
	if _, st := call(t, h2, "GET", "/api/daemon/status", ""); st["robot_name"] != long {
		t.Fatalf("robot_name after a restart: %v", st["robot_name"])
	}
	if got := daemonapi.RobotName(dir); got != long {
		t.Fatalf("RobotName(dataDir) = %q", got)
	}
}

func TestRobotNameWithoutADataDir(t *testing.T) {
	h := newDaemon(t, &fakeApps{}, &fakeRobot{}, "")
	code, body := call(t, h, "POST", "/api/daemon/robot-name", `{"name": "Kitchen robot"}`)
	apitest.WantDetail(t, code, body, http.StatusServiceUnavailable, "this daemon keeps no data directory: the name cannot be saved")
	if _, body := call(t, h, "GET", "/api/daemon/robot-name", ""); body["name"] != daemonapi.DefaultRobotName {
		t.Fatalf("name: %v", body)
	}
}

func TestLockStatusAndHardwareID(t *testing.T) {
	a := &fakeApps{slot: apps.SlotInfo{State: "free"}}
	h := newDaemon(t, a, &fakeRobot{}, "")
	code, body := call(t, h, "GET", "/api/daemon/robot-app-lock-status", "")
	if v, ok := body["holder_name"]; code != http.StatusOK || body["state"] != "free" || !ok || v != nil {
		t.Fatalf("free slot: %d %v, want free with holder_name null", code, body)
	}
	a.slot = apps.SlotInfo{State: "local_app", Holder: "hello"}
	if _, body := call(t, h, "GET", "/api/daemon/robot-app-lock-status", ""); body["state"] != "local_app" || body["holder_name"] != "hello" {
		t.Fatalf("held slot: %v", body)
	}

	code, body = call(t, h, "GET", "/api/daemon/hardware-id", "")
	v, ok := body["hardware_id"]
	if code != http.StatusOK || !ok {
		t.Fatalf("hardware-id: %d %v", code, body)
	}
	want := daemonapi.HardwareID()
	switch {
	case want == nil && v != nil, want != nil && v != *want:
		t.Fatalf("hardware_id %v, want %v", v, want)
	}
	if id, _ := v.(string); v != nil && len(id) != 16 {
		t.Fatalf("hardware_id %q: want 16 hex digits", id)
	}
}

// The kept name is read from the data dir only: a name file that is unreadable or empty is the
// default name, never an error.
func TestRobotNameFromAnEmptyFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "robot-name"), []byte(" \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := daemonapi.RobotName(dir); got != daemonapi.DefaultRobotName {
		t.Fatalf("RobotName = %q, want the default", got)
	}
}
