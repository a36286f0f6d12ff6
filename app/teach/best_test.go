package teach

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"perch/engine/lora"
	"perch/engine/train"
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
	// The start validates lowest but is no saved state: the run's best is
	// the engine's, checkpoint by checkpoint.
	vals := map[int]float64{0: 0.1, 5: 0.5, 10: 0.3, 15: 0.4, 20: 0.6}
	f.trainer.val = func(step int, _ float64) float64 { return vals[step] }
	if _, err := f.svc.Start(defaultPlan()); err != nil {
		t.Fatal(err)
	}
	var bests []int
	done := f.until("the run to finish", func(r ui.TrainRun) bool {
		if n := len(bests); n == 0 || bests[n-1] != r.BestStep {
			bests = append(bests, r.BestStep)
		}
		return !r.State.Active()
	})
	if done.State != ui.RunDone || done.Step != 20 || done.BestStep != 10 || done.BestVal != 0.3 {
		t.Fatalf("finished %+v", done)
	}
	if !slices.Equal(bests, []int{0, 5, 10}) {
		t.Fatalf("the run's best went by steps %v, want 0 (none yet), 5, 10", bests)
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

// The run's best joins the engine's best of this segment with the best of
// the segments before it, by the engine's rule, with the segment's offset
// added.
func TestBestJoinsSegments(t *testing.T) {
	ckpt, earlier := filepath.Join("run", "part-10", "checkpoints", "step-00010"), filepath.Join("run", "part-0", "checkpoints", "step-00005")
	prior := 0.3
	a := &active{offset: 10}
	if b := a.bestSoFar(&Event{BestLoss: math.NaN()}); b != nil {
		t.Fatalf("nothing validated: %+v", b)
	}
	b := a.bestSoFar(&Event{Best: ckpt, BestStep: 10, BestLoss: 0.2})
	if b == nil || b.Step != 20 || b.Path != ckpt || *b.ValLoss != 0.2 {
		t.Fatalf("the segment's best with its offset: %+v", b)
	}
	a.before = &train.Checkpoint{Step: 5, Path: earlier, ValLoss: &prior}
	if b := a.bestSoFar(&Event{Best: ckpt, BestStep: 10, BestLoss: 0.4}); b == nil || b.Path != earlier {
		t.Fatalf("an earlier segment's lower loss lost to %+v", b)
	}
	if b := a.bestSoFar(&Event{Best: ckpt, BestStep: 10, BestLoss: 0.3}); b == nil || b.Path != earlier {
		t.Fatalf("a tie went to the later checkpoint %+v (the engine keeps the earlier)", b)
	}
}
