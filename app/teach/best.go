package teach

import (
	"math"
	"os"
	"path/filepath"

	"perch/app/history"
	"perch/engine/lora"
	"perch/engine/train"
)

// bestDir is the folder inside an adapter's library folder that holds
// the run's best checkpoint when it is not the final adapter: export
// writes it (mlx-lm's two files), the chat uses the final adapter.
const bestDir = "best"

// bestSoFar is the run's saved state with the lowest validation loss
// (Path a folder, Step counted from the run's start): the best the
// engine reports with a checkpoint or at the end of this segment, joined
// with the earlier segments' by the engine's own rule. A continued run's
// engine counts its earlier checkpoints itself; a run resumed from an
// adapter alone (a checkpoint older Perch wrote) starts a new count.
func (a *active) bestSoFar(ev *Event) *train.Checkpoint {
	var cs []train.Checkpoint
	if a.before != nil {
		cs = append(cs, *a.before)
	}
	if ev.Best != "" {
		loss := ev.BestLoss
		cs = append(cs, train.Checkpoint{Step: ev.BestStep + a.offset, Path: ev.Best, ValLoss: &loss})
	}
	return train.BestOf(cs...)
}

// bestSaved is the best of a run's recorded checkpoints up to step (where
// a resumed run goes on from), by the engine's rule.
func bestSaved(cs []history.Checkpoint, step int) *train.Checkpoint {
	var in []train.Checkpoint
	for _, c := range cs {
		if c.Step > step {
			continue
		}
		tc := train.Checkpoint{Step: c.Step, Path: c.Path}
		if !math.IsNaN(c.ValLoss) {
			loss := c.ValLoss
			tc.ValLoss = &loss
		}
		in = append(in, tc)
	}
	return train.BestOf(in...)
}

// bestFields is b as a run or adapter record holds it: NaN and 0 when
// nothing saved was validated.
func bestFields(b *train.Checkpoint) (float64, int) {
	if b == nil {
		return math.NaN(), 0
	}
	return *b.ValLoss, b.Step
}

// keepBest records best (bestSoFar at the end of the run) as the
// adapter's, and keeps that checkpoint beside the final adapter in the
// library (or removes an earlier one) unless it is the final adapter
// itself (its folder, or its state at the last step), so the list's "best
// validation loss (checkpoint at step N)" names what export writes.
func keepBest(best *train.Checkpoint, adapter string, rec *history.Adapter) error {
	into := filepath.Join(rec.Dir, bestDir)
	rec.BestVal, rec.BestStep = bestFields(best)
	if best == nil || filepath.Clean(best.Path) == filepath.Clean(adapter) || best.Step == rec.Steps {
		return os.RemoveAll(into)
	}
	return linkAdapter(best.Path, into)
}

// exportSource is the folder export copies: the best checkpoint when the
// library keeps one for the adapter, else the adapter itself.
func exportSource(a history.Adapter) string {
	best := filepath.Join(a.Dir, bestDir)
	if _, err := os.Stat(filepath.Join(best, lora.WeightsFile)); err == nil {
		return best
	}
	return a.Dir
}
