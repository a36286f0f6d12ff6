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

// bestSaved picks, among a finished run's saved states (its checkpoints
// and the final adapter at run.Step), the one with the lowest validation
// loss. dir is "" when that is the final adapter or nothing saved was
// validated; val is NaN and step 0 when nothing saved was validated.
func (s *Service) bestSaved(run history.TrainRun) (dir string, step int, val float64) {
	val = math.NaN()
	if ms, err := s.o.Store.Metrics(run.ID); err == nil {
		for _, m := range ms {
			if m.Step == run.Step && !math.IsNaN(m.ValLoss) {
				step, val = run.Step, m.ValLoss
			}
		}
	}
	cs, _ := s.o.Store.Checkpoints(run.ID)
	for _, c := range cs {
		if c.Step >= run.Step || math.IsNaN(c.ValLoss) || (!math.IsNaN(val) && c.ValLoss >= val) {
			continue // the final adapter's own checkpoint, unvalidated, or no better
		}
		if _, err := os.Stat(filepath.Join(c.Path, lora.WeightsFile)); err != nil {
			continue
		}
		dir, step, val = c.Path, c.Step, c.ValLoss
	}
	return dir, step, val
}

// keepBest copies the run's best checkpoint beside its final adapter in
// the library (or removes an earlier run segment's) and records which
// saved state it is, so the list's "best validation loss (checkpoint at
// step N)" names what export writes.
func (s *Service) keepBest(run history.TrainRun, rec *history.Adapter) error {
	dir, step, val := s.bestSaved(run)
	rec.BestVal, rec.BestStep = val, step
	into := filepath.Join(rec.Dir, bestDir)
	if dir == "" {
		return os.RemoveAll(into)
	}
	return copyAdapter(dir, into)
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
