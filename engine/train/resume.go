package train

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"perch/engine/lora"
)

// Moments copies the trainer's optimizer state.
func (t *Trainer) Moments() Moments {
	o := t.opt.clone()
	return Moments{Names: append([]string(nil), t.names...), M: o.m, V: o.v, Steps: t.steps, Seqs: t.nseq}
}

// Restore sets the optimizer state saved by Moments (the leaves come with
// the adapter the trainer was made from).
func (t *Trainer) Restore(mo Moments) error {
	if len(mo.Names) != len(t.names) || len(mo.M) != len(t.names) || len(mo.V) != len(t.names) {
		return fmt.Errorf("resume state: %d leaves, the adapter has %d", len(mo.Names), len(t.names))
	}
	for i, n := range t.names {
		if mo.Names[i] != n || len(mo.M[i]) != len(t.host[i]) || len(mo.V[i]) != len(t.host[i]) {
			return fmt.Errorf("resume state: leaf %d is %s with %d moments; the adapter's is %s with %d values", i, mo.Names[i], len(mo.M[i]), n, len(t.host[i]))
		}
	}
	o := t.opt.clone()
	for i := range o.m {
		o.m[i], o.v[i] = append([]float32(nil), mo.M[i]...), append([]float32(nil), mo.V[i]...)
	}
	t.opt, t.steps, t.nseq = o, mo.Steps, mo.Seqs
	return nil
}

// resumable is a Stepper whose optimizer state a checkpoint can hold.
type resumable interface {
	Moments() Moments
}

func (d driven) Moments() Moments { return d.Trainer.Moments() }

// savePoint is what a checkpoint (or the top of the adapter folder) holds:
// the adapter and, when the stepper has one, the resume state.
type savePoint struct {
	adapter Snapshot
	state   *State
}

func (p savePoint) Save(dir string) error {
	if err := p.adapter.Save(dir); err != nil {
		return err
	}
	if p.state == nil {
		return nil
	}
	return p.state.Save(dir)
}

// point snapshots the run after step: the adapter, and the state resuming
// from it needs (metrics as given: the caller adds what the save records).
func (r *runner) point(step int, m Metrics) (savePoint, error) {
	snap, err := r.s.Snapshot()
	if err != nil {
		return savePoint{}, err
	}
	rs, ok := r.s.(resumable)
	ad, isAdapter := snap.(*lora.Adapter)
	if !ok || !isAdapter || r.p.Settings == nil {
		return savePoint{adapter: snap}, nil
	}
	m.Finished, m.Cancelled, m.Error, m.Adapter = false, false, "", ""
	st := &State{Step: step, Epoch: r.dealt.epoch, Pos: r.dealt.pos, Order: append([]int(nil), r.dealt.order...),
		Stream: r.streamBytes, Data: r.p.fingerprint, Settings: *r.p.Settings, Metrics: m, Adapter: ad, Moments: rs.Moments()}
	return savePoint{adapter: snap, state: st}, nil
}

// continueFrom sets the run up to go on after st: the batcher, the metrics,
// and metrics.jsonl cut back to the bytes written up to st (what a crash
// left after it is not part of the series).
func (r *runner) continueFrom(st *State) error {
	if st.Data != r.p.fingerprint {
		return fmt.Errorf("the data differs from the run's (its rows or their tokens changed): continue it with the data it started with")
	}
	if err := r.batcher.seek(st.Epoch, st.Pos, st.Order); err != nil {
		return err
	}
	r.dealt = r.batcher.position()
	r.metrics = st.Metrics
	r.metrics.Iters = r.p.Iters
	r.start = st.Step
	path := filepath.Join(r.p.AdapterDir, StreamFile)
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s: %w", StreamFile, err)
	}
	keep := min(st.Stream, fi.Size())
	if keep < st.Stream { // a full disk cut the stream short: keep whole lines
		keep = lastNewline(path, keep)
	}
	if err := os.Truncate(path, keep); err != nil {
		return fmt.Errorf("%s: %w", StreamFile, err)
	}
	r.streamBytes = keep
	return nil
}

// lastNewline is the length of path's first n bytes up to their last newline.
func lastNewline(path string, n int64) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := io.ReadFull(f, b); err != nil {
		return 0
	}
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			return int64(i + 1)
		}
	}
	return 0
}
