package engine

import (
	"path/filepath"
	"testing"
)

func TestReadDefaultsIsWhatAnUnsetRequestGets(t *testing.T) {
	dir := filepath.Join(testdata, "models", "text-tiny")
	d, err := ReadDefaults(dir)
	if err != nil {
		t.Fatal(err)
	}
	// generation_config.json: 1.0 / 0.95 / 64; processor_config.json: 6 soft tokens.
	want := Defaults{Temperature: 1, TopP: 0.95, TopK: 64, ImageTokens: 6, VideoFPS: 2, MaxFrames: 32, MaxTokens: DefaultMaxTokens}
	if d.TopP < 0.9499 || d.TopP > 0.9501 {
		t.Fatalf("top-p %v", d.TopP)
	}
	d.TopP = want.TopP
	if d != want {
		t.Fatalf("defaults = %+v, want %+v", d, want)
	}
	e := openTiny(t, "text-tiny", Options{})
	p, err := e.samplingParams(Sampling{})
	if err != nil || float64(p.Temperature) != d.Temperature || p.TopK != d.TopK {
		t.Fatalf("an unset request samples with %+v, %v", p, err)
	}
	if _, err := ReadDefaults(t.TempDir()); err == nil {
		t.Fatal("a folder without a model has no defaults")
	}
}
