// Package sidebyside runs the Python reference half of a benchmark (Pillow,
// numpy) in the same `go test -bench` run, so results are compared as ratios
// measured minutes apart on the same machine, never across runs.
package sidebyside

import (
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Python returns an interpreter that can import every module, or a reason.
// PERCH_PYTHON overrides; Debian's /usr/bin/python3 carries python3-pil and
// python3-numpy.
func Python(modules ...string) (string, error) {
	cands := []string{os.Getenv("PERCH_PYTHON"), "/usr/bin/python3", "python3"}
	for _, c := range cands {
		if c == "" {
			continue
		}
		p, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		check := "import " + strings.Join(modules, ", ")
		if exec.Command(p, "-c", check).Run() == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not importable (Debian: apt install python3-pil python3-numpy)", strings.Join(modules, ", "))
}

// RunMS runs a reference script that prints its median wall and CPU
// milliseconds, single-threaded.
func RunMS(python string, args ...string) (Times, error) {
	cmd := exec.Command(python, args...)
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "MKL_NUM_THREADS=1")
	out, err := cmd.Output()
	if err != nil {
		return Times{}, fmt.Errorf("%s %v: %v", python, args, err)
	}
	f := strings.Fields(string(out))
	if len(f) < 2 {
		return Times{}, fmt.Errorf("%s printed %q, want wall and CPU ms", args[0], out)
	}
	wall, err1 := strconv.ParseFloat(f[len(f)-2], 64)
	cpu, err2 := strconv.ParseFloat(f[len(f)-1], 64)
	if err1 != nil || err2 != nil {
		return Times{}, fmt.Errorf("%s printed %q", args[0], out)
	}
	return Times{Wall: wall, CPU: cpu}, nil
}

// Times are median milliseconds: wall clock, and CPU time of the process
// (all threads). CPU time is the steadier number on a shared machine.
type Times struct{ Wall, CPU float64 }

// Median times fn runs times.
func Median(runs int, fn func()) Times {
	wall, cpu := make([]float64, runs), make([]float64, runs)
	for i := range wall {
		c0, s := cpuMS(), time.Now()
		fn()
		wall[i], cpu[i] = float64(time.Since(s).Microseconds())/1e3, cpuMS()-c0
	}
	sort.Float64s(wall)
	sort.Float64s(cpu)
	return Times{wall[runs/2], cpu[runs/2]}
}

func cpuMS() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

// Report adds the side-by-side metrics to b and logs one line: Go at
// GOMAXPROCS and on one thread, against the single-threaded reference.
func Report(b *testing.B, name string, goT, go1T, ref Times, refName string) {
	b.Helper()
	b.ReportMetric(goT.Wall, "go-ms")
	b.ReportMetric(go1T.Wall, "go1thread-ms")
	b.ReportMetric(ref.Wall, refName+"-ms")
	b.ReportMetric(goT.Wall/ref.Wall, "x-"+refName)
	b.ReportMetric(go1T.CPU/ref.CPU, "xcpu1thread-"+refName)
	b.Logf("%s: Go %.1f ms wall (%.1f ms on one thread, %.1f ms CPU) vs %s %.1f ms wall (%.1f ms CPU): "+
		"%.2fx wall, %.2fx one-thread CPU time (target <= 1.0x)",
		name, goT.Wall, go1T.Wall, go1T.CPU, refName, ref.Wall, ref.CPU, goT.Wall/ref.Wall, go1T.CPU/ref.CPU)
}
