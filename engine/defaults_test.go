package engine

import (
	"path/filepath"
	"testing"

	"perch/engine/sample"
)

func TestReadDefaultsIsWhatAnUnsetRequestGets(t *testing.T) {
	dir := filepath.Join(testdata, "models", "text-tiny")
	d, err := ReadDefaults(dir)
	if err != nil {
		t.Fatal(err)
	}
	// generation_config.json: 1.0 / 0.95 / 64; processor_config.json: 6 soft tokens.
	want := Defaults{Sampling: sample.Params{Temperature: 1, TopP: 0.95, TopK: 64, RepetitionContext: 20}, ImageTokens: 6, VideoFPS: 2, MaxFrames: 32, MaxTokens: DefaultMaxTokens}
	if d != want {
		t.Fatalf("defaults = %+v, want %+v", d, want)
	}
	e := openTiny(t, "text-tiny", Options{})
	p, err := e.samplingParams(Sampling{})
	if p.Seed = 0; err != nil || p != d.Sampling {
		t.Fatalf("an unset request samples with %+v, %v", p, err)
	}
	temp, topP, topK, minP, rep, seed := float32(0.5), float32(0.8), 7, float32(0.1), float32(1.2), uint64(42)
	p, err = e.samplingParams(Sampling{Temperature: &temp, TopP: &topP, TopK: &topK, MinP: &minP, RepetitionPenalty: &rep, Seed: &seed})
	if want := (sample.Params{Temperature: temp, TopP: topP, TopK: topK, MinP: minP, RepetitionPenalty: rep,
		RepetitionContext: p.RepetitionContext, Seed: seed}); err != nil || p != want {
		t.Fatalf("a request's settings give %+v, %v; want %+v", p, err, want)
	}
	if _, err := ReadDefaults(t.TempDir()); err == nil {
		t.Fatal("a folder without a model has no defaults")
	}
}
