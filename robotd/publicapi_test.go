package robotd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// The public robot daemon's API (pollen-robotics/reachy_mini, docs/source/API/openapi.json, 79
// operations) as its clients see it: each operation, a request a client makes, and the shape of
// the answer, written here from that document (the document itself is not in our tree). Every
// operation is called on a --sim daemon and its answer validated against that shape.

// publicSchemas are the public document's response shapes that operations share, in OpenAPI 3.0.
var publicSchemas = map[string]string{
	"AppInfo":    `{"type":"object","required":["name","source_kind"],"properties":{"name":{"type":"string"},"source_kind":{"type":"string","enum":["hf_space","dashboard_selection","local","installed"]},"description":{"type":"string"},"url":{"type":"string","nullable":true},"extra":{"type":"object"}}}`,
	"AppStatus":  `{"type":"object","required":["info","state"],"properties":{"info":{"$ref":"#/AppInfo"},"state":{"type":"string","enum":["starting","running","done","stopping","error"]},"error":{"type":"string","nullable":true}}}`,
	"JobInfo":    `{"type":"object","required":["command","status","logs"],"properties":{"command":{"type":"string"},"status":{"type":"string","enum":["pending","in_progress","done","failed"]},"logs":{"type":"array","items":{"type":"string"}}}}`,
	"StartupApp": `{"type":"object","properties":{"startup_app":{"type":"string","nullable":true}}}`,
	"Updates":    `{"type":"object","required":["apps_with_updates","apps_checked","apps_skipped"],"properties":{"apps_with_updates":{"type":"array","items":{"type":"object","required":["app_name","space_id","installed_sha","latest_sha","update_available"]}},"apps_checked":{"type":"integer"},"apps_skipped":{"type":"integer"}}}`,
	"StrMap":     `{"type":"object","additionalProperties":{"type":"string"}}`,
	"AnyObject":  `{"type":"object"}`,
	"Anything":   `{}`,
	"MoveUUID":   `{"type":"object","required":["uuid"],"properties":{"uuid":{"type":"string","format":"uuid"}}}`,
	"XYZRPY":     `{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"},"z":{"type":"number"},"roll":{"type":"number"},"pitch":{"type":"number"},"yaw":{"type":"number"}}}`,
	"Matrix":     `{"type":"object","required":["m"],"properties":{"m":{"type":"array","minItems":16,"maxItems":16,"items":{"type":"number"}}}}`,
	"DaemonStatus": `{"type":"object","required":["robot_name","state","wireless_version","desktop_app_daemon","simulation_enabled","mockup_sim_enabled","backend_status"],"properties":{
		"type":{"type":"string","enum":["daemon_status"]},"robot_name":{"type":"string"},"state":{"type":"string","enum":["not_initialized","starting","running","stopping","stopped","error"]},
		"wireless_version":{"type":"boolean"},"desktop_app_daemon":{"type":"boolean"},"simulation_enabled":{"type":"boolean","nullable":true},"mockup_sim_enabled":{"type":"boolean","nullable":true},
		"backend_status":{"nullable":true,"type":"object","required":["motor_control_mode"],"properties":{"motor_control_mode":{"type":"string","enum":["enabled","disabled","gravity_compensation"]}}},
		"error":{"type":"string","nullable":true},"version":{"type":"string","nullable":true},"hardware_id":{"type":"string","nullable":true}}}`,
	"FullState": `{"type":"object","properties":{"control_mode":{"type":"string","nullable":true,"enum":["enabled","disabled","gravity_compensation"]},
		"head_pose":{"nullable":true,"oneOf":[{"$ref":"#/XYZRPY"},{"$ref":"#/Matrix"}]},"head_joints":{"type":"array","nullable":true,"items":{"type":"number"}},
		"body_yaw":{"type":"number","nullable":true},"antennas_position":{"type":"array","nullable":true,"items":{"type":"number"}},"timestamp":{"type":"string","format":"date-time","nullable":true}}}`,
	"Antennas":    `{"type":"array","minItems":2,"maxItems":2,"items":{"type":"number"}}`,
	"MotorStatus": `{"type":"object","required":["mode"],"properties":{"mode":{"type":"string","enum":["enabled","disabled","gravity_compensation"]}}}`,
	"RobotName":   `{"type":"object","properties":{"name":{"type":"string","nullable":true}}}`,
	"LockStatus":  `{"type":"object","required":["state"],"properties":{"state":{"type":"string","enum":["free","local_app","remote_session"]},"holder_name":{"type":"string","nullable":true}}}`,
	"Token":       `{"type":"object","required":["status"],"properties":{"status":{"type":"string"},"username":{"type":"string","nullable":true},"message":{"type":"string","nullable":true}}}`,
	"FaceTarget":  `{"type":"object","properties":{"detected":{"type":"boolean"},"x":{"type":"number","nullable":true},"y":{"type":"number","nullable":true},"roll":{"type":"number","nullable":true},"ts":{"type":"number","nullable":true}}}`,
	"Strings":     `{"type":"array","items":{"type":"string"}}`,
	"Number":      `{"type":"number"}`,
	"Detail":      `{"type":"object","required":["detail"],"properties":{"detail":{}}}`,
	"Resolution":  `{"type":"object","required":["name","width","height","fps","crop_factor"],"properties":{"name":{"type":"string"},"width":{"type":"integer"},"height":{"type":"integer"},"fps":{"type":"integer"},"crop_factor":{"type":"number"}}}`,
	"Volume":      `{"type":"object","required":["volume","platform","device"],"properties":{"volume":{"type":"integer"},"platform":{"type":"string"},"device":{"type":"string"}}}`,
}

// publicOp is one operation of the public API: the request made, the answer's status and shape.
type publicOp struct {
	method, path string // the public path template
	url          string // the request made ("": path)
	body         any
	status       int    // 0: 200
	schema       string // a key of publicSchemas, or a schema
}

func (o publicOp) key() string { return o.method + " " + o.path }

// publicOps are the 79 operations, in an order where each finds what it needs (an installed app,
// a job).
func publicOps(jobID string) []publicOp {
	return []publicOp{
		{method: "GET", path: "/", schema: "Anything"},
		{method: "GET", path: "/api/apps/list-available/{source_kind}", url: "/api/apps/list-available/installed", schema: `{"type":"array","items":{"$ref":"#/AppInfo"}}`},
		{method: "GET", path: "/api/apps/list-available", schema: `{"type":"array","items":{"$ref":"#/AppInfo"}}`},
		{method: "POST", path: "/api/apps/install", body: map[string]any{"name": "ok_app", "source_kind": "local", "url": testdataApp("coop_app")}, schema: "StrMap"},
		{method: "GET", path: "/api/apps/job-status/{job_id}", url: "/api/apps/job-status/" + jobID, schema: "JobInfo"},
		{method: "GET", path: "/api/apps/startup-app", schema: "StartupApp"},
		{method: "PUT", path: "/api/apps/startup-app", body: map[string]any{"startup_app": nil}, schema: "StartupApp"},
		{method: "POST", path: "/api/apps/install-private-space", body: map[string]any{"space_id": "local/private_app"}, status: 400, schema: "Detail"}, // no hub here
		{method: "GET", path: "/api/apps/check-updates", schema: "Updates"},
		{method: "POST", path: "/api/apps/start-app/{app_name}", url: "/api/apps/start-app/coop_app", schema: "AppStatus"},
		{method: "GET", path: "/api/apps/current-app-status", schema: `{"nullable":true,"allOf":[{"$ref":"#/AppStatus"}]}`},
		{method: "POST", path: "/api/apps/restart-current-app", schema: "AppStatus"},
		{method: "POST", path: "/api/apps/stop-current-app", schema: `{"nullable":true,"enum":[null]}`},
		{method: "POST", path: "/api/apps/start-app/{app_name}/no-evict", url: "/api/apps/start-app/coop_app/no-evict", schema: "AppStatus"},
		{method: "POST", path: "/api/apps/update/{app_name}", url: "/api/apps/update/coop_app", schema: "StrMap"},
		{method: "POST", path: "/api/apps/remove/{app_name}", url: "/api/apps/remove/nope", status: 404, schema: "Detail"},

		{method: "GET", path: "/api/daemon/status", schema: "DaemonStatus"},
		{method: "GET", path: "/api/daemon/robot-name", schema: "RobotName"},
		{method: "POST", path: "/api/daemon/robot-name", body: map[string]any{"name": "desk robot"}, schema: "RobotName"},
		{method: "GET", path: "/api/daemon/hardware-id", schema: `{"type":"object","additionalProperties":{"type":"string","nullable":true}}`},
		{method: "GET", path: "/api/daemon/robot-app-lock-status", schema: "LockStatus"},
		{method: "POST", path: "/api/daemon/stop", url: "/api/daemon/stop?goto_sleep=false", schema: "StrMap"},
		{method: "POST", path: "/api/daemon/start", url: "/api/daemon/start?wake_up=true", schema: "StrMap"},
		{method: "POST", path: "/api/daemon/restart", schema: "StrMap"},

		{method: "POST", path: "/api/hf-auth/save-token", body: map[string]any{"token": "hf_not_a_real_token"}, status: 400, schema: "Detail"},
		{method: "GET", path: "/api/hf-auth/status", schema: "AnyObject"},
		{method: "GET", path: "/api/hf-auth/relay-status", schema: "AnyObject"},
		{method: "DELETE", path: "/api/hf-auth/token", schema: "StrMap"},
		{method: "POST", path: "/api/hf-auth/refresh-relay", schema: "AnyObject"},
		{method: "GET", path: "/api/hf-auth/central-robot-status", schema: "AnyObject"},
		{method: "GET", path: "/api/hf-auth/oauth/configured", schema: "AnyObject"},
		{method: "GET", path: "/api/hf-auth/oauth/start", status: 503, schema: "Detail"},
		{method: "GET", path: "/api/hf-auth/oauth/begin", status: 503, schema: "Detail"},
		{method: "GET", path: "/api/hf-auth/oauth/status/{session_id}", url: "/api/hf-auth/oauth/status/s1", schema: "AnyObject"},
		{method: "DELETE", path: "/api/hf-auth/oauth/session/{session_id}", url: "/api/hf-auth/oauth/session/s1", status: 404, schema: "Detail"},
		{method: "POST", path: "/api/hf-auth/oauth/device/start", status: 503, schema: "Detail"},
		{method: "GET", path: "/api/hf-auth/oauth/device/status/{session_id}", url: "/api/hf-auth/oauth/device/status/s1", schema: "AnyObject"},
		{method: "DELETE", path: "/api/hf-auth/oauth/device/session/{session_id}", url: "/api/hf-auth/oauth/device/session/s1", status: 404, schema: "Detail"},
		{method: "GET", path: "/api/hf-auth/oauth/callback", url: "/api/hf-auth/oauth/callback?code=x&state=y", status: 503, schema: "Detail"},

		{method: "GET", path: "/api/kinematics/info", schema: "AnyObject"},
		{method: "GET", path: "/api/kinematics/urdf", schema: "StrMap"},
		{method: "GET", path: "/api/kinematics/stl/{filename}", url: "/api/kinematics/stl/head.stl", schema: ""},

		{method: "POST", path: "/api/media/wobbling/enable", schema: "StrMap"},
		{method: "POST", path: "/api/media/wobbling/disable", schema: "StrMap"},
		{method: "POST", path: "/api/media/tracking/enable", body: map[string]any{"weight": 0.5}, status: 503, schema: "Detail"},
		{method: "POST", path: "/api/media/tracking/disable", schema: `{"type":"object","additionalProperties":{"oneOf":[{"type":"string"},{"type":"boolean"}]}}`},
		{method: "GET", path: "/api/media/tracking/face", schema: "FaceTarget"},

		{method: "GET", path: "/api/motors/status", schema: "MotorStatus"},
		{method: "POST", path: "/api/motors/set_mode/{mode}", url: "/api/motors/set_mode/enabled", schema: "StrMap"},
		{method: "GET", path: "/api/move/running", schema: `{"type":"array","items":{"$ref":"#/MoveUUID"}}`},
		{method: "POST", path: "/api/move/goto", body: map[string]any{"antennas": []float64{0.2, -0.2}, "duration": 0.2, "interpolation": "minjerk"}, schema: "MoveUUID"},
		{method: "POST", path: "/api/move/play/wake_up", schema: "MoveUUID"},
		{method: "POST", path: "/api/move/play/goto_sleep", schema: "MoveUUID"},
		{method: "GET", path: "/api/move/recorded-move-datasets/list/{dataset_name}", url: "/api/move/recorded-move-datasets/list/local/moves", schema: `{"type":"array","items":{"type":"string"}}`},
		{method: "POST", path: "/api/move/play/recorded-move-dataset/{dataset_name}/{move_name}", url: "/api/move/play/recorded-move-dataset/local/moves/nod", schema: "MoveUUID"},
		{method: "POST", path: "/api/move/stop", body: map[string]any{"uuid": "00000000-0000-4000-8000-000000000000"}, status: 404, schema: "Detail"},
		{method: "POST", path: "/api/move/set_target", body: map[string]any{"target_antennas": []float64{0, 0}, "target_head_pose": map[string]float64{"yaw": 0.1}}, schema: "StrMap"},
		{method: "GET", path: "/api/state/present_head_pose", url: "/api/state/present_head_pose?use_pose_matrix=true", schema: "Matrix"},
		{method: "GET", path: "/api/state/present_body_yaw", schema: "Number"},
		{method: "GET", path: "/api/state/present_antenna_joint_positions", schema: "Antennas"},
		{method: "GET", path: "/api/state/full", url: "/api/state/full?with_head_joints=true", schema: "FullState"},

		{method: "POST", path: "/api/media/release", schema: "StrMap"},
		{method: "POST", path: "/api/media/acquire", schema: "StrMap"},
		{method: "GET", path: "/api/media/status", schema: `{"type":"object","additionalProperties":{"type":"boolean"}}`},
		{method: "POST", path: "/api/media/play_sound", body: map[string]any{"file": "wake_up.wav"}, schema: "StrMap"},
		{method: "POST", path: "/api/media/stop_sound", schema: "StrMap"},
		{method: "POST", path: "/api/media/clear_incoming_audio", schema: "StrMap"},
		{method: "POST", path: "/api/media/sounds/upload", body: map[string]any{"file": "not a form"}, status: 422, schema: "Detail"},
		{method: "GET", path: "/api/media/sounds", schema: `{"type":"object","additionalProperties":{"type":"array","items":{"type":"string"}}}`},
		{method: "DELETE", path: "/api/media/sounds/{filename}", url: "/api/media/sounds/nope.wav", status: 404, schema: "Detail"},
		{method: "GET", path: "/api/camera/specs", schema: `{"type":"object","required":["name","available_resolutions","default_resolution","K","D"],"properties":{
			"name":{"type":"string"},"available_resolutions":{"type":"array","items":{"$ref":"#/Resolution"}},"default_resolution":{"$ref":"#/Resolution"},
			"K":{"type":"array","items":{"type":"array","items":{"type":"number"}}},"D":{"type":"array","items":{"type":"number"}}}}`},
		{method: "GET", path: "/api/volume/current", schema: "Volume"},
		{method: "POST", path: "/api/volume/set", body: map[string]any{"volume": 60}, schema: "Volume"},
		{method: "POST", path: "/api/volume/test-sound", schema: `{"type":"object","required":["status","message"],"properties":{"status":{"type":"string"},"message":{"type":"string"}}}`},
		{method: "GET", path: "/api/volume/microphone/current", schema: "Volume"},
		{method: "POST", path: "/api/volume/microphone/set", body: map[string]any{"volume": 90}, schema: "Volume"},
		// The simulated robot has no XVF3800: the public daemon answers 503 and null the same way.
		{method: "POST", path: "/api/audio/config/apply", body: map[string]any{"config": []map[string]any{{"name": "PP_AGCONOFF", "values": []float64{1}}}}, status: 503, schema: "Detail"},
		{method: "GET", path: "/api/audio/config/parameter/{name}", url: "/api/audio/config/parameter/DOA_VALUE_RADIANS", status: 503, schema: "Detail"},
		{method: "GET", path: "/api/state/doa", schema: `{"nullable":true,"type":"object","required":["angle","speech_detected"],"properties":{"angle":{"type":"number"},"speech_detected":{"type":"boolean"}}}`},
	}
}

// publicSchema resolves a schema of publicSchemas (or written inline), its "#/Name" references
// included.
func publicSchema(t *testing.T, text string) *openapi3.Schema {
	t.Helper()
	if named, ok := publicSchemas[text]; ok {
		text = named
	}
	doc := map[string]any{"openapi": "3.0.3", "info": map[string]any{"title": "public", "version": "1"}, "paths": map[string]any{},
		"components": map[string]any{"schemas": map[string]any{}}}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for name, s := range publicSchemas {
		var v any
		if err := json.Unmarshal([]byte(strings.ReplaceAll(s, `"#/`, `"#/components/schemas/`)), &v); err != nil {
			t.Fatalf("schema %s: %v", name, err)
		}
		schemas[name] = v
	}
	var root any
	if err := json.Unmarshal([]byte(strings.ReplaceAll(text, `"#/`, `"#/components/schemas/`)), &root); err != nil {
		t.Fatalf("schema %s: %v", text, err)
	}
	schemas["_root"] = root
	data, _ := json.Marshal(doc)
	loaded, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatalf("schema %s: %v", text, err)
	}
	return loaded.Components.Schemas["_root"].Value
}

func TestEveryPublicOperationIsServedWithItsShape(t *testing.T) {
	parallel(t)
	// The move library local/moves was downloaded before (the daemon has no hub: --hub-url none).
	dataDir := t.TempDir()
	if _, err := newHubClient(t, movesHub(t).URL).SnapshotDownload(context.Background(), "dataset", "local/moves", "main",
		filepath.Join(dataDir, "datasets"), nil); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, daemonOptions{dataDir: dataDir})
	d.waitRobot(10*time.Second, "the robot awake and still", func(s robotState) bool { return s.Awake && s.Move == nil })
	var created struct {
		JobID string `json:"job_id"`
	}
	if code := d.call("POST", "/api/apps/install", map[string]string{"url": testdataApp("coop_app")}, &created); code != 200 {
		t.Fatalf("install: %d", code)
	}
	d.waitJob(created.JobID)
	ops := publicOps(created.JobID)
	seen := map[string]bool{}
	for _, op := range ops {
		seen[op.key()] = true
	}
	if len(seen) != 79 {
		t.Fatalf("the table has %d distinct operations, the public API 79", len(seen))
	}
	for _, op := range ops {
		t.Run(op.key(), func(t *testing.T) {
			url := op.url
			if url == "" {
				url = op.path
			}
			var rd io.Reader
			if op.body != nil {
				data, _ := json.Marshal(op.body)
				rd = bytes.NewReader(data)
			}
			req, _ := http.NewRequest(op.method, d.url+url, rd)
			if rd != nil {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := d.do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want := op.status
			if want == 0 {
				want = 200
			}
			if resp.StatusCode != want {
				t.Fatalf("%s %s answered %d %s, want %d", op.method, url, resp.StatusCode, truncateBody(body), want)
			}
			if op.schema == "" {
				if len(body) == 0 {
					t.Fatalf("%s %s: an empty body", op.method, url)
				}
				return
			}
			if op.path == "/" {
				return // the dashboard's page
			}
			var v any
			if err := json.Unmarshal(body, &v); err != nil {
				t.Fatalf("%s %s: not JSON: %v: %s", op.method, url, err, truncateBody(body))
			}
			if err := publicSchema(t, op.schema).VisitJSON(v); err != nil {
				t.Fatalf("%s %s answered %s, not the public shape: %v", op.method, url, truncateBody(body), err)
			}
		})
	}
}
