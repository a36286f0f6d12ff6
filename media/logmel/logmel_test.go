package logmel

import (
	"math"
	"testing"

	"perch/media/npy"
)

func load(t testing.TB, path string) *npy.Array {
	t.Helper()
	a, err := npy.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestWindowExact(t *testing.T) {
	want := load(t, "testdata/audio-tiny/window.npy").F32
	got := hann(320)
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("tap %d: %v, want %v", i, got[i], want[i])
		}
	}
}

func TestMelFilters(t *testing.T) {
	want := load(t, "testdata/audio-tiny/mel_filters.npy").F32
	got := MelFilters(Gemma4)
	var maxd float64
	diff := 0
	for i := range want {
		d := math.Abs(float64(got[i] - want[i]))
		maxd = max(maxd, d)
		if got[i] != want[i] {
			diff++
		}
	}
	// Go's math.Pow and numpy's power differ in the last ulp at 8 kHz: the
	// reference keeps a 1e-14 weight on the top bin where we get 0.
	t.Logf("mel filters: %d of %d entries differ, max |diff| %.3g", diff, len(want), maxd)
	if maxd > 1e-7 {
		t.Fatalf("mel filters differ by %g", maxd)
	}
}

// The fixture's log-mel (mlx-vlm, numpy): README tolerance atol 1e-5; mask exact.
func TestFeaturesMatchGolden(t *testing.T) {
	wave := load(t, "testdata/audio-tiny/waveform.npy").F32
	want := load(t, "testdata/audio-tiny/input_features.npy")
	wantMask := load(t, "testdata/audio-tiny/input_features_mask.npy").U8
	e, err := New(Gemma4)
	if err != nil {
		t.Fatal(err)
	}
	f, err := e.Compute(wave)
	if err != nil {
		t.Fatal(err)
	}
	if f.Frames != 150 || f.Bins != 128 || f.Valid() != 149 {
		t.Fatalf("%d frames x %d bins, %d valid", f.Frames, f.Bins, f.Valid())
	}
	for i, m := range wantMask {
		if f.Mask[i] != (m != 0) {
			t.Fatalf("mask[%d] = %v", i, f.Mask[i])
		}
	}
	var maxd float64
	exact := 0
	for i, w := range want.F32 {
		d := math.Abs(float64(f.Data[i] - w))
		maxd = max(maxd, d)
		if f.Data[i] == w {
			exact++
		}
	}
	t.Logf("log-mel vs golden: max |diff| %.3g, %d of %d values bit-exact", maxd, exact, len(want.F32))
	if maxd > 1e-5 {
		t.Fatalf("log-mel differs by %g (tolerance 1e-5)", maxd)
	}
}
