package teach

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"perch/app/history"
	"perch/engine/lora"
	"perch/ui"
)

// exportedStep is the step the fake trainer wrote into an exported folder.
func exportedStep(t *testing.T, f *fixture, id string) int {
	t.Helper()
	out, err := f.svc.ExportAdapter(id, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, err := lora.Load(out)
	if err != nil {
		t.Fatalf("the export does not load: %v", err)
	}
	return int(a.Leaves["model.layers.0.self_attn.q_proj.lora_b"].Data[0])
}

// A run whose validation loss turned up at the end: the library names its
// best checkpoint and export writes that one; the chat keeps the final
// adapter. A run that ended at its best exports the final adapter.
func TestExportWritesTheBestCheckpoint(t *testing.T) {
	f := newFixture(t, "")
	f.pairs(5)
	vals := map[int]float64{5: 0.5, 10: 0.3, 15: 0.4, 20: 0.6}
	f.trainer.val = func(step int, _ float64) float64 { return vals[step] }
	if _, err := f.svc.Start(defaultPlan()); err != nil {
		t.Fatal(err)
	}
	done := f.until("the run to finish", func(r ui.TrainRun) bool { return !r.State.Active() })
	if done.State != ui.RunDone || done.Step != 20 {
		t.Fatalf("finished %+v", done)
	}
	as, _ := f.svc.Adapters()
	if len(as) != 1 || as[0].BestStep != 10 || as[0].BestVal != 0.3 || as[0].Steps != 20 {
		t.Fatalf("library %+v", as)
	}
	if got := exportedStep(t, f, as[0].ID); got != 10 {
		t.Fatalf("export wrote the adapter of step %d, want the best checkpoint's (10)", got)
	}
	if used, err := lora.Load(f.svc.AdapterDir(as[0].ID)); err != nil || used.Leaves["model.layers.0.self_attn.q_proj.lora_b"].Data[0] != 20 {
		t.Fatalf("the chat's adapter is not the final one: %v", err)
	}

	// Validation falling to the end: the final adapter is the best.
	f.trainer.val = nil
	second := defaultPlan()
	second.Name = "my-style-2"
	if _, err := f.svc.Start(second); err != nil {
		t.Fatal(err)
	}
	f.until("the second run", func(r ui.TrainRun) bool { return !r.State.Active() })
	as, _ = f.svc.Adapters()
	if len(as) != 2 || as[0].BestStep != 20 {
		t.Fatalf("library %+v", as)
	}
	if got := exportedStep(t, f, as[0].ID); got != 20 {
		t.Fatalf("export wrote step %d, want the final adapter (20)", got)
	}
}

// keepBest takes the engine's best saved state: nothing validated clears
// it, the final adapter's own state keeps no copy, a checkpoint is kept
// beside the adapter with the segment's offset added to its step.
func TestKeepBestTakesTheEnginesBest(t *testing.T) {
	run := t.TempDir()
	final, ckpt := filepath.Join(run, "final"), filepath.Join(run, "checkpoints", "step-00020")
	saveFake(final, 30)
	saveFake(ckpt, 20)
	rec := &history.Adapter{Dir: filepath.Join(t.TempDir(), "ad")}
	if err := keepBest(&Event{Step: 30, Adapter: final, Best: ckpt, BestStep: 20, BestLoss: 0.2}, 10, rec); err != nil {
		t.Fatal(err)
	}
	if rec.BestStep != 30 || rec.BestVal != 0.2 {
		t.Fatalf("best step %d val %v", rec.BestStep, rec.BestVal)
	}
	if a, err := lora.Load(filepath.Join(rec.Dir, bestDir)); err != nil || a.Leaves["model.layers.0.self_attn.q_proj.lora_b"].Data[0] != 20 {
		t.Fatalf("the best checkpoint is not kept: %v", err)
	}
	for _, done := range []Event{
		{Step: 30, Adapter: final, Best: final, BestStep: 30, BestLoss: 0.15},                                          // the final adapter
		{Step: 30, Adapter: final, Best: filepath.Join(run, "checkpoints", "step-00030"), BestStep: 30, BestLoss: 0.1}, // its own checkpoint
	} {
		if err := keepBest(&done, 0, rec); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(rec.Dir, bestDir)); !os.IsNotExist(err) || rec.BestStep != 30 || rec.BestVal != done.BestLoss {
			t.Fatalf("%+v: best %d %v, folder %v", done, rec.BestStep, rec.BestVal, err)
		}
	}
	if err := keepBest(&Event{Step: 30, Adapter: final}, 0, rec); err != nil || !math.IsNaN(rec.BestVal) || rec.BestStep != 0 {
		t.Fatalf("nothing validated: best %d %v, %v", rec.BestStep, rec.BestVal, err)
	}
}
