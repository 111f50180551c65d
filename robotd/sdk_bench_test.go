package robotd_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// poseRoundTrip is an SDK client that sets a head target (a numpy pose) and reads the state until
// the daemon shows it, b.N times, alternating two yaws, and prints each round trip in seconds.
const poseRoundTrip = `import json, sys, time
from robot_sdk import Robot
from robot_sdk.utils import create_head_pose

n = int(sys.argv[1])
poses = [(y, create_head_pose(yaw=y, degrees=False)) for y in (0.2, -0.2)]
lat = []
with Robot() as robot:
    for i in range(n):
        yaw, pose = poses[i % 2]
        t0 = time.perf_counter()
        robot.set_target(head=pose)
        while abs(robot.get_state()["target_head_pose"]["yaw"] - yaw) > 1e-6:
            pass
        lat.append(time.perf_counter() - t0)
print(json.dumps(lat))
`

// A pose's round trip from the Python SDK: set_target, then get_state until the target shows
// (target: p99 ≤ 5 ms). The SDK keeps one HTTP connection; numpy builds the pose.
func BenchmarkSDKPoseRoundTrip(b *testing.B) {
	if err := exec.Command(systemPython, "-c", "import numpy, scipy").Run(); err != nil {
		b.Skipf("%s cannot import numpy and scipy: %v", systemPython, err)
	}
	d := startDaemon(b, daemonOptions{args: []string{"--log-level", "warn"}})
	path := filepath.Join(b.TempDir(), "roundtrip.py")
	if err := os.WriteFile(path, []byte(poseRoundTrip), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(sharedVenv, "bin", "python"), path, strconv.Itoa(b.N))
	cmd.Env = append(os.Environ(), d.ownerEnv()...)
	b.ResetTimer()
	out, err := cmd.Output()
	b.StopTimer()
	if err != nil {
		b.Fatalf("the SDK client: %v\n%s", err, out)
	}
	var secs []float64
	if err := json.Unmarshal(out, &secs); err != nil || len(secs) != b.N {
		b.Fatalf("the SDK client printed %q: %v", out, err)
	}
	lat := make([]time.Duration, len(secs))
	for i, s := range secs {
		lat[i] = time.Duration(s * float64(time.Second))
	}
	percentiles(b, "roundtrip", lat)
}
