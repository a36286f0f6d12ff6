package teach

import (
	"math"
	"os"
	"path/filepath"

	"perch/app/history"
	"perch/engine/lora"
)

// bestDir is the folder inside an adapter's library folder that holds
// the run's best checkpoint when it is not the final adapter: export
// writes it (mlx-lm's two files), the chat uses the final adapter.
const bestDir = "best"

// keepBest records the saved state with the lowest validation loss, as the
// engine's run reported it (done.Best: a checkpoint folder, the final
// adapter's, or "" when nothing saved was validated; offset: the steps
// before the segment), and keeps that checkpoint beside the final adapter
// in the library (or removes an earlier segment's), so the list's "best
// validation loss (checkpoint at step N)" names what export writes.
func keepBest(done *Event, offset int, rec *history.Adapter) error {
	into := filepath.Join(rec.Dir, bestDir)
	if done.Best == "" {
		rec.BestVal, rec.BestStep = math.NaN(), 0
		return os.RemoveAll(into)
	}
	rec.BestVal, rec.BestStep = done.BestLoss, done.BestStep+offset
	if filepath.Clean(done.Best) == filepath.Clean(done.Adapter) || done.BestStep == done.Step {
		return os.RemoveAll(into) // the final adapter (or its own checkpoint) is the best
	}
	return linkAdapter(done.Best, into)
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
