package audio

import (
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// need skips the test with one line when a tool is missing.
func need(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (make test installs it on Debian): skipping", tool)
		}
	}
}

// run runs a command, failing the test with its output on error.
func run(t testing.TB, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func tmp(t testing.TB, name string) string { return filepath.Join(t.TempDir(), name) }

// wavBytes builds a WAV with a raw fmt chunk and data.
func wavBytes(format, channels, rate, bits int, data []byte) []byte {
	return append(wavHeaderBytes(format, channels, rate, bits, len(data)), data...)
}

func sine(n, rate int, freq, amp float64) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(amp * math.Sin(2*math.Pi*freq*float64(i)/float64(rate)))
	}
	return s
}

func float32LE(s []float32) []byte {
	b := make([]byte, 0, 4*len(s))
	for _, v := range s {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// amplitudeAt measures the amplitude of frequency f in x (Goertzel-style
// projection on sine and cosine, skipping the edges).
func amplitudeAt(x []float32, rate int, f float64) float64 {
	lo, hi := len(x)/8, len(x)*7/8
	var re, im float64
	for i := lo; i < hi; i++ {
		ph := 2 * math.Pi * f * float64(i) / float64(rate)
		re += float64(x[i]) * math.Cos(ph)
		im += float64(x[i]) * math.Sin(ph)
	}
	n := float64(hi - lo)
	return 2 * math.Hypot(re, im) / n
}
