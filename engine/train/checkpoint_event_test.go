package train

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// A checkpoint event means the folder is complete: a caller that records
// it (the app's run history) never records one a crash leaves half
// written, even when saving is slower than training.
func TestCheckpointEventFollowsTheSave(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "adapter")
	var mu sync.Mutex
	var bad []string
	seen := 0
	h := Host{Emit: func(ev Event) {
		if ev.Kind != EventCheckpoint {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		seen++
		if _, err := os.Stat(filepath.Join(ev.Path, "adapters.safetensors")); err != nil {
			bad = append(bad, ev.Path)
		}
	}}
	h.save = func(s Snapshot, dir string) error {
		time.Sleep(20 * time.Millisecond) // a slow disk
		return s.Save(dir)
	}
	p := Plan{Method: SFT, Train: fakeRows(4), Iters: 6, BatchSize: 1, SaveEvery: 2, AdapterDir: dir, NoShuffle: true}
	if _, err := Run(context.Background(), &fakeStepper{}, p, h); err != nil {
		t.Fatal(err)
	}
	if seen != 3 || len(bad) > 0 {
		t.Fatalf("%d checkpoint events; reported before their files existed: %v", seen, bad)
	}
}

// valStepper validates at the losses of a table by step.
type valStepper struct {
	fakeStepper
	val map[int]float64
}

func (v *valStepper) Evaluate(rows []Row) (StepMetrics, error) {
	return StepMetrics{Loss: v.val[v.steps], Tokens: 3 * len(rows)}, nil
}

// Each checkpoint event carries the best saved state so far, the one
// metrics.json names once that checkpoint is listed: the earlier of equal
// losses, never the unsaved start; BestOf joins checkpoints by the same rule.
func TestCheckpointEventsCarryTheBestSoFar(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "adapter")
	var mu sync.Mutex
	type seen struct {
		step, best int
		loss       float64
		val        float64
	}
	var got []seen
	h := Host{Emit: func(ev Event) {
		if ev.Kind != EventCheckpoint {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		s := seen{step: ev.Step, val: ev.ValLoss, best: -1}
		if ev.Best != nil {
			s.best, s.loss = ev.Best.Step, *ev.Best.ValLoss
		}
		got = append(got, s)
	}}
	// The start validates lowest of all but is no saved state; step 6 ties step 4.
	st := &valStepper{val: map[int]float64{0: 0.125, 2: 0.875, 4: 0.5, 6: 0.5, 8: 0.75}}
	p := Plan{Method: SFT, Train: fakeRows(4), Valid: fakeRows(2), Iters: 8, BatchSize: 1, ValEvery: 2, SaveEvery: 2, AdapterDir: dir, NoShuffle: true}
	if _, err := Run(context.Background(), st, p, h); err != nil {
		t.Fatal(err)
	}
	want := []seen{{2, 2, 0.875, 0.875}, {4, 4, 0.5, 0.5}, {6, 4, 0.5, 0.5}, {8, 4, 0.5, 0.75}}
	if !slices.Equal(got, want) {
		t.Fatalf("checkpoint events (step, best step, best loss, own loss) %v, want %v", got, want)
	}
	m, err := ReadMetrics(dir)
	if err != nil || m.Best == nil || m.Best.Step != 4 {
		t.Fatalf("metrics.json's best %+v, %v", m, err)
	}
	if b := BestOf(m.Checkpoints...); b == nil || b.Step != 4 || b.Path != m.Checkpoints[1].Path || *b.ValLoss != 0.5 {
		t.Fatalf("BestOf %+v, want the checkpoint at step 4", b)
	}
	if b := BestOf(Checkpoint{Step: 3, Path: "x"}); b != nil {
		t.Fatalf("BestOf an unvalidated checkpoint: %+v", b)
	}
}
