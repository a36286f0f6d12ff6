package train

import (
	"fmt"
	"math"
	"path/filepath"

	"perch/internal/durable"
)

// checkpoint copies the leaves (and the optimizer state) to the host and
// has the saver write them while training goes on: the checkpoint folder,
// then its event line, then metrics.json lists it, then the top of the
// adapter folder is replaced by it. A save that fails records nothing.
// One checkpoint is written at a time: the next waits for the last, so a
// failed save stops the run before a later checkpoint is made, however
// slow the disk.
func (r *runner) checkpoint(step int, val float64, hasVal bool) error {
	if r.saving != nil {
		<-r.saving
		if err := r.sv.failed(); err != nil {
			return err
		}
	}
	name := CheckpointName(step, val, hasVal)
	rel := filepath.Join("checkpoints", name)
	ev := Event{Kind: EventCheckpoint, Step: step, Path: filepath.Join(r.p.AdapterDir, rel), ValLoss: math.NaN()}
	if hasVal {
		ev.ValLoss = val
	}
	line := ev.JSON(r.p.Method, true)
	r.streamBytes += int64(len(line)) + 1
	r.metricsMu.Lock()
	m := r.metrics.clone()
	r.metricsMu.Unlock()
	m.addCheckpoint(step, rel, val, hasVal)
	if m.Best != nil { // what r.metrics names once this save completes: saves go one at a time
		b := *m.Best
		ev.Best = &b
	}
	pt, err := r.point(step, m)
	if err != nil {
		return fmt.Errorf("checkpoint at step %d: %w", step, err)
	}
	done := make(chan struct{})
	r.saving = done
	r.sv.do("checkpoint "+rel, func() error {
		defer close(done)
		if err := r.sv.checkpoint(pt, name); err != nil {
			return err
		}
		if err := r.st.write(line); err != nil {
			return err
		}
		r.report(ev)
		r.metricsMu.Lock()
		r.metrics.addCheckpoint(step, rel, val, hasVal)
		data := r.metrics.encode()
		r.metricsMu.Unlock()
		if err := durable.WriteFile(filepath.Join(r.p.AdapterDir, MetricsFile), data, 0o755); err != nil {
			return fmt.Errorf("%s: %w", MetricsFile, err)
		}
		if err := r.sv.save(pt, r.p.AdapterDir); err != nil {
			return fmt.Errorf("the adapter at the top of %s: %w", r.p.AdapterDir, err)
		}
		return nil
	})
	return nil
}

// saveTop queues a save of the run after step to the top of the folder.
func (r *runner) saveTop(step int) error {
	r.metricsMu.Lock()
	m := r.metrics.clone()
	r.metricsMu.Unlock()
	pt, err := r.point(step, m)
	if err != nil {
		return fmt.Errorf("adapter at step %d: %w", step, err)
	}
	r.sv.do("the adapter at the top of "+r.p.AdapterDir, func() error { return r.sv.save(pt, r.p.AdapterDir) })
	return nil
}

// writeMetrics queues a rewrite of metrics.json as it stands when written.
func (r *runner) writeMetrics() {
	r.sv.do(MetricsFile, func() error {
		r.metricsMu.Lock()
		data := r.metrics.encode()
		r.metricsMu.Unlock()
		return durable.WriteFile(filepath.Join(r.p.AdapterDir, MetricsFile), data, 0o755)
	})
}
