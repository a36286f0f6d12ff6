package logmel

import (
	"math"
	"testing"
)

// The audio-tiny README's table: samples -> mel frames (valid), encoder
// frames (valid), placeholder tokens.
func TestTokenTable(t *testing.T) {
	e, err := New(Gemma4)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range [][6]int{
		{16000, 99, 99, 25, 25, 25},
		{16160, 101, 100, 26, 25, 26},
		{24000, 150, 149, 38, 38, 38},
		{32000, 199, 199, 50, 50, 50},
		{32320, 202, 201, 51, 51, 51},
		{53328, 333, 333, 84, 84, 84},
	} {
		f, err := e.Compute(make([]float32, r[0]))
		if err != nil {
			t.Fatal(err)
		}
		enc, encValid := EncoderFrames(f.Mask)
		tok := SoftTokens(r[0], 16000, 40, 750)
		got := [6]int{r[0], f.Frames, f.Valid(), enc, encValid, tok}
		if got != r {
			t.Errorf("got %v, want %v", got, r)
		}
	}
}

func TestSoftTokensFloatRounding(t *testing.T) {
	// Python: math.ceil(257920/16000*1000.0/40) == 404, one more than 257920/640.
	if got := SoftTokens(257920, 16000, 40, 750); got != 404 {
		t.Fatalf("got %d, want 404 (mlx-vlm's float rounding)", got)
	}
	if got := SoftTokens(480000, 16000, 40, 750); got != 750 {
		t.Fatalf("30 s: %d", got)
	}
	if got := SoftTokens(10*480000, 16000, 40, 750); got != 750 {
		t.Fatalf("cap: %d", got)
	}
}

func TestPlaceholderRows(t *testing.T) {
	got := PlaceholderRows(5, 3)
	if want := []int{0, 1, 2, 0, 1}; len(got) != 5 || got[3] != want[3] || got[4] != want[4] {
		t.Fatalf("%v", got)
	}
}

func TestUnifiedRowsMatchGolden(t *testing.T) {
	wave := load(t, "testdata/audio-tiny/waveform.npy").F32
	want := load(t, "testdata/vision-unified-tiny/audio_input_features.npy")
	mask := load(t, "testdata/vision-unified-tiny/audio_input_features_mask.npy").U8
	rows, n := UnifiedRows(wave, 640)
	if n != 38 || len(mask) != 38 || SoftTokens(len(wave), 16000, 40, 750) != n {
		t.Fatalf("%d rows", n)
	}
	for i := range want.F32 {
		if math.Float32bits(rows[i]) != math.Float32bits(want.F32[i]) {
			t.Fatalf("row value %d differs", i)
		}
	}
	for _, m := range mask {
		if m != 1 {
			t.Fatal("all unified rows are valid")
		}
	}
}

func TestTooShortAndBadParams(t *testing.T) {
	e, _ := New(Gemma4)
	if _, err := e.Compute(make([]float32, 5)); err == nil {
		t.Error("5 samples accepted")
	}
	if _, err := e.Compute(nil); err == nil {
		t.Error("empty accepted")
	}
	if _, err := New(Params{}); err == nil {
		t.Error("zero params accepted")
	}
}
