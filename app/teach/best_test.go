package teach

import (
	"math"
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

// bestSaved skips checkpoints whose files are gone and unvalidated ones.
func TestBestSavedSkipsMissingAndUnvalidated(t *testing.T) {
	f := newFixture(t, "")
	run := history.TrainRun{ID: "run-b", Name: "b", Base: "tiny", Method: "dpo", Plan: "{}", Dir: t.TempDir(), State: history.RunDone, Step: 30, Steps: 30}
	if err := f.store.CreateRun(&run); err != nil {
		t.Fatal(err)
	}
	kept := t.TempDir()
	saveFake(kept, 20)
	f.store.AddCheckpoint(run.ID, history.Checkpoint{Step: 10, Path: t.TempDir() + "/gone", ValLoss: 0.1})
	f.store.AddCheckpoint(run.ID, history.Checkpoint{Step: 20, Path: kept, ValLoss: 0.2})
	f.store.AddCheckpoint(run.ID, history.Checkpoint{Step: 25, Path: kept, ValLoss: math.NaN()})
	if dir, step, val := f.svc.bestSaved(run); dir != kept || step != 20 || val != 0.2 {
		t.Fatalf("best %q step %d val %v", dir, step, val)
	}
	// The final adapter validated lower than every checkpoint: it is the best.
	f.store.AddMetrics(run.ID, []history.Metric{{Step: 30, Loss: math.NaN(), ValLoss: 0.15, Margin: math.NaN()}})
	if dir, step, val := f.svc.bestSaved(run); dir != "" || step != 30 || val != 0.15 {
		t.Fatalf("best %q step %d val %v", dir, step, val)
	}
}
