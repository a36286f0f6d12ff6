package teach

import (
	"math"

	"perch/app/history"
	"perch/engine/train"
)

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
