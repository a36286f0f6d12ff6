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

// RunMS runs a reference script that prints one number (median milliseconds),
// single-threaded.
func RunMS(python string, args ...string) (float64, error) {
	cmd := exec.Command(python, args...)
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "MKL_NUM_THREADS=1")
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("%s %v: %v", python, args, err)
	}
	fields := strings.Fields(string(out))
	if len(fields) == 0 {
		return 0, fmt.Errorf("%s printed nothing", args[0])
	}
	return strconv.ParseFloat(fields[len(fields)-1], 64)
}

// MedianMS times fn runs times and returns the median in milliseconds.
func MedianMS(runs int, fn func()) float64 {
	ts := make([]float64, runs)
	for i := range ts {
		s := time.Now()
		fn()
		ts[i] = float64(time.Since(s).Microseconds()) / 1e3
	}
	sort.Float64s(ts)
	return ts[runs/2]
}

// Report adds the side-by-side metrics to b and logs one line.
func Report(b *testing.B, name string, goMS, go1MS, refMS float64, ref string) {
	b.ReportMetric(goMS, "go-ms")
	b.ReportMetric(go1MS, "go1thread-ms")
	b.ReportMetric(refMS, ref+"-ms")
	b.ReportMetric(goMS/refMS, "x-"+ref)
	b.ReportMetric(go1MS/refMS, "x1thread-"+ref)
	b.Logf("%s: Go %.1f ms (%.1f ms on one thread) vs %s %.1f ms: %.2fx (%.2fx one thread; target <= 1.0x)",
		name, goMS, go1MS, ref, refMS, goMS/refMS, go1MS/refMS)
}
