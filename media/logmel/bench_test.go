package logmel

import (
	"math"
	"runtime"
	"strconv"
	"testing"

	"perch/media/internal/sidebyside"
)

func thirtySeconds() []float32 {
	x := make([]float32, 480000)
	for i := range x {
		t := float64(i) / 16000
		x[i] = float32(0.3*math.Sin(2*math.Pi*(200+300*t)*t) + 0.05*math.Sin(float64(i)*0.37))
	}
	return x
}

func BenchmarkLogMel30s(b *testing.B) {
	e, _ := New(Gemma4)
	x := thirtySeconds()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.Compute(x); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLogMelVsNumpy times 30 s of log-mel in Go and in numpy (the
// reference extractor's maths, testdata/logmel_numpy.py) in the same run.
func BenchmarkLogMelVsNumpy(b *testing.B) {
	py, err := sidebyside.Python("numpy")
	if err != nil {
		b.Skipf("no side-by-side: %v", err)
	}
	e, _ := New(Gemma4)
	x := thirtySeconds()
	run := func() {
		if _, err := e.Compute(x); err != nil {
			b.Fatal(err)
		}
	}
	runs := max(b.N, 5)
	goT := sidebyside.Median(runs, run)
	prev := runtime.GOMAXPROCS(1)
	go1T := sidebyside.Median(runs, run)
	runtime.GOMAXPROCS(prev)
	ref, err := sidebyside.RunMS(py, "testdata/logmel_numpy.py", strconv.Itoa(runs))
	if err != nil {
		b.Fatal(err)
	}
	sidebyside.Report(b, "log-mel 30 s", goT, go1T, ref, "numpy")
}
