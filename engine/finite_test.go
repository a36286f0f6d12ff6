package engine

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"perch/engine/gemma4/synth"
	"perch/engine/mlx"
)

// TestNaNWeightsFailLoudly: a checkpoint whose weights are NaN ends the
// request with ErrNonFinite ("the model produced NaN ...") instead of an
// empty answer.
func TestNaNWeightsFailLoudly(t *testing.T) {
	tiny := filepath.Join(testdata, "models", "text-tiny")
	raw, err := os.ReadFile(filepath.Join(tiny, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := synth.FamilyConfig(raw, "e4b") // text only
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := synth.Write(dir, cfg, synth.Options{Seed: 1, Scale: float32(math.NaN())}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "generation_config.json"} {
		data, err := os.ReadFile(filepath.Join(tiny, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), data, 0o644)
	}
	for _, backend := range []string{BackendGo, BackendMLX} {
		if backend == BackendMLX && mlx.Available() != nil {
			continue
		}
		zero := float32(0)
		for _, s := range []Sampling{{}, {Temperature: &zero}} { // sampled, and greedy
			e, err := Open(dir, Options{Backend: backend})
			if err != nil {
				t.Fatal(err)
			}
			ch, err := e.Generate(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: []Part{{Type: PartText, Text: "hi"}}}}, MaxTokens: 4, Sampling: s})
			if err != nil {
				t.Fatal(err)
			}
			var got error
			text := ""
			for ev := range ch {
				switch ev.Kind {
				case EventError:
					got = ev.Err
				case EventToken:
					text += ev.Token.Text
				}
			}
			e.Close()
			if !errors.Is(got, ErrNonFinite) || !strings.Contains(got.Error(), "the model produced NaN") || text != "" {
				t.Fatalf("%s: error %v, text %q", backend, got, text)
			}
			t.Logf("%s: NaN checkpoint: %v", backend, got)
		}
	}
}
