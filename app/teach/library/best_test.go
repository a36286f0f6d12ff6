package library

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"perch/app/history"
	"perch/engine/lora"
	"perch/engine/train"
)

// saveAdapter writes a small adapter folder the engine's loader accepts,
// its step in one weight.
func saveAdapter(t *testing.T, dir string, step int) {
	t.Helper()
	cfg := lora.DefaultConfig()
	cfg.LoRA.Rank = 2
	a := &lora.Adapter{Config: cfg, Leaves: map[string]lora.Leaf{
		"model.layers.0.self_attn.q_proj.lora_a": {Shape: []int{4, 2}, Data: make([]float32, 8)},
		"model.layers.0.self_attn.q_proj.lora_b": {Shape: []int{2, 4}, Data: []float32{float32(step), 0, 0, 0, 0, 0, 0, 0}},
	}}
	if err := a.Save(dir); err != nil {
		t.Fatal(err)
	}
}

// keepBest keeps the run's best checkpoint beside the final adapter unless
// it is the final adapter's own state, and clears it when nothing was
// validated.
func TestKeepBestKeepsTheCheckpoint(t *testing.T) {
	run := t.TempDir()
	final, ckpt := filepath.Join(run, "part-10"), filepath.Join(run, "part-10", "checkpoints", "step-00010")
	saveAdapter(t, final, 30)
	saveAdapter(t, ckpt, 20)
	rec := &history.Adapter{Dir: filepath.Join(t.TempDir(), "ad"), Steps: 30}
	loss := 0.2
	if err := keepBest(&train.Checkpoint{Step: 20, Path: ckpt, ValLoss: &loss}, final, rec); err != nil {
		t.Fatal(err)
	}
	if rec.BestStep != 20 || rec.BestVal != 0.2 {
		t.Fatalf("best step %d val %v", rec.BestStep, rec.BestVal)
	}
	if a, err := lora.Load(filepath.Join(rec.Dir, bestDir)); err != nil || a.Leaves["model.layers.0.self_attn.q_proj.lora_b"].Data[0] != 20 {
		t.Fatalf("the best checkpoint is not kept: %v", err)
	}
	for _, b := range []train.Checkpoint{
		{Step: 30, Path: final, ValLoss: &loss},                                             // the final adapter
		{Step: 30, Path: filepath.Join(final, "checkpoints", "step-00030"), ValLoss: &loss}, // its own checkpoint
	} {
		if err := keepBest(&b, final, rec); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(rec.Dir, bestDir)); !os.IsNotExist(err) || rec.BestStep != 30 || rec.BestVal != loss {
			t.Fatalf("%+v: best %d %v, folder %v", b, rec.BestStep, rec.BestVal, err)
		}
	}
	if err := keepBest(nil, final, rec); err != nil || !math.IsNaN(rec.BestVal) || rec.BestStep != 0 {
		t.Fatalf("nothing validated: best %d %v, %v", rec.BestStep, rec.BestVal, err)
	}
}
