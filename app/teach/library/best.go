package library

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

// keepBest records best (the run's, as Keep takes it) as the adapter's, and keeps that checkpoint beside the final adapter in the
// library (or removes an earlier one) unless it is the final adapter
// itself (its folder, or its state at the last step), so the list's "best
// validation loss (checkpoint at step N)" names what export writes.
func keepBest(best *train.Checkpoint, adapter string, rec *history.Adapter) error {
	into := filepath.Join(rec.Dir, bestDir)
	rec.BestVal, rec.BestStep = math.NaN(), 0
	if best != nil {
		rec.BestVal, rec.BestStep = *best.ValLoss, best.Step
	}
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
