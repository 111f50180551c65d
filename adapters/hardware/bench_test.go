package hardware_test

import (
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/robothub/robothub/adapters/hardware"
	"github.com/robothub/robothub/adapters/hardware/busemu"
	"github.com/robothub/robothub/core/robot"
)

// BenchmarkControlLoop50Hz runs the hardware control loop on the emulated bus (with the wire time
// of a 1 Mbaud line) for a minute while the head keeps moving, and reports its period over that
// minute: p50, p99, max and jitter (standard deviation), from the loop's own statistics, which
// keep exactly the last 60 s. BUSEMU_BENCH_SECONDS shortens it.
func BenchmarkControlLoop50Hz(b *testing.B) {
	seconds := 60
	if n, err := strconv.Atoi(os.Getenv("BUSEMU_BENCH_SECONDS")); err == nil && n > 0 {
		seconds = n
	}
	for b.Loop() {
		emu, err := busemu.Start(busemu.Options{Config: hardware.DefaultConfig(), Asleep: true, Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		hw, err := hardware.New(hardware.Options{Port: emu.Path(), Config: hardware.DefaultConfig()})
		if err != nil {
			b.Fatal(err)
		}
		r := robot.New(hw, nil)
		<-r.WakeUp().Done()
		start := time.Now()
		for i := 0; time.Since(start) < time.Duration(seconds)*time.Second; i++ {
			head := robot.HeadPose{Yaw: 0.3 * math.Sin(float64(i)), Pitch: 0.1 * math.Cos(float64(i))}
			m, err := r.Goto(robot.Target{Head: &head}, 500*time.Millisecond, robot.MinJerk)
			if err != nil {
				b.Fatal(err)
			}
			<-m.Done()
		}
		st := hw.Status().ControlLoop
		r.Close()
		emu.Close()
		b.ReportMetric(st.PeriodP50Ms, "period-p50-ms")
		b.ReportMetric(st.PeriodP99Ms, "period-p99-ms")
		b.ReportMetric(st.PeriodMaxMs, "period-max-ms")
		b.ReportMetric(st.JitterMs, "jitter-ms")
		b.ReportMetric(float64(st.Overruns), "overruns")
	}
}
