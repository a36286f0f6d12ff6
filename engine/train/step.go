package train

import (
	"errors"
	"fmt"
	"time"

	"perch/engine/autodiff"
	"perch/engine/gemma4"
	"perch/engine/lora"
	"perch/engine/tensor"
)

// Trainer holds an adapter on a backend and its optimizer state, and steps
// it. It runs on its own view of the model (m.Text.Adapter is left alone),
// so the engine can serve requests between steps with the adapter off or
// with another one. Engine thread only.
type Trainer struct {
	b     tensor.Backend
	m     *gemma4.Model
	text  *gemma4.Text // the policy: base + the trainer's adapter
	base  *gemma4.Text // the reference: adapter off (the same weights)
	opts  Options
	obj   Objective
	cfg   lora.Config
	bound *lora.Bound
	names []string    // leaf 2i: target i's lora_a, 2i+1: its lora_b
	host  [][]float32 // the leaves on the host (the optimizer's copy)
	opt   *adamw
	steps int // updates done

	byLayer   [][]int // target indices per layer
	donorUsed []bool  // layer i's keys/values are read by a KV-shared layer
	tape      *autodiff.Tape

	// leafMark precedes the current leaves: a run sweeps back to it, and
	// an update frees the replaced leaves with it (a lazy backend frees
	// only what was made since a mark).
	leafMark uint64

	// During a run.
	mark      uint64
	group     []*seq
	grads     []tensor.Tensor
	tapeBytes int64
	nseq      int
	dropped   []*gemma4.LoRA
}

// NewTrainer binds ad to m on b and checks opts and the leaves (one lora_a
// and one lora_b per adapted projection, the LoRA+ groups).
func NewTrainer(b tensor.Backend, m *gemma4.Model, ad *lora.Adapter, opts Options) (*Trainer, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if ad.Config.LoRA.Dropout < 0 || ad.Config.LoRA.Dropout >= 1 {
		return nil, fmt.Errorf("LoRA dropout %v is outside [0, 1)", ad.Config.LoRA.Dropout)
	}
	leafMark := b.Mark()
	bound, err := lora.Bind(b, m.Text, ad)
	if err != nil {
		return nil, err
	}
	obj, err := ObjectiveOf(opts.Method)
	if err != nil {
		return nil, err
	}
	t := &Trainer{b: b, m: m, opts: opts, obj: obj, cfg: ad.Config, bound: bound, tape: autodiff.New(b), leafMark: leafMark}
	t.text = m.Text.WithBackend(b, bound.Adapter)
	t.base = m.Text.WithBackend(b, nil)
	var sizes []int
	for _, tg := range bound.Targets {
		t.names = append(t.names, tg.A(), tg.B())
	}
	host, err := bound.Host(ad.Config)
	if err != nil {
		bound.Free()
		return nil, err
	}
	for _, n := range t.names {
		t.host = append(t.host, host.Leaves[n].Data)
		sizes = append(sizes, len(host.Leaves[n].Data))
	}
	if t.opt, err = newAdamW(t.names, sizes, len(bound.Targets), opts.LoRAPlusRatio, opts.WeightDecay); err != nil {
		bound.Free()
		return nil, err
	}
	cfg := m.Text.Cfg
	t.byLayer = make([][]int, len(m.Text.Layers))
	for i, tg := range bound.Targets {
		t.byLayer[tg.Layer] = append(t.byLayer[tg.Layer], i)
	}
	t.donorUsed = make([]bool, len(m.Text.Layers))
	for i := range m.Text.Layers {
		if d := cfg.KVDonor(i); d != i && d >= 0 {
			t.donorUsed[d] = true
		}
	}
	return t, nil
}

// Step runs one optimizer step on a batch: the loss and its gradient at
// the current leaves, the global-norm clip, AdamW with LoRA+. On a lazy
// backend a step (and Evaluate) frees the unpinned tensors made since the
// previous one: pin what must outlive it.
func (t *Trainer) Step(rows []Row) (StepMetrics, error) {
	start := time.Now()
	m, grads, err := t.stepGrads(rows)
	if err != nil {
		return m, err
	}
	m.GradNorm = globalNorm(grads)
	clip(grads, m.GradNorm, t.opts.GradClip)
	m.LR = t.opts.Schedule.LR(t.opts.LearningRate, t.steps)
	t.opt.update(t.host, grads, m.LR)
	t.steps++
	if err := t.upload(); err != nil {
		return m, err
	}
	m.PeakMemory = t.b.PeakMemory()
	m.Elapsed = time.Since(start)
	return m, nil
}

// Evaluate computes a batch's loss and metrics without updating.
func (t *Trainer) Evaluate(rows []Row) (StepMetrics, error) {
	start := time.Now()
	m, _, err := t.run(rows, false)
	m.PeakMemory = t.b.PeakMemory()
	m.Elapsed = time.Since(start)
	return m, err
}

// Snapshot copies the current leaves to the host.
func (t *Trainer) Snapshot() (*lora.Adapter, error) {
	a := &lora.Adapter{Config: t.cfg, Leaves: map[string]lora.Leaf{}}
	for i, n := range t.names {
		lo := t.bound.LoRAs[i/2]
		shape := lo.A.Shape()
		if i%2 == 1 {
			shape = lo.B.Shape()
		}
		a.Leaves[n] = lora.Leaf{Shape: append([]int(nil), shape...), Data: append([]float32(nil), t.host[i]...)}
	}
	return a, nil
}

// Steps is the number of optimizer updates done.
func (t *Trainer) Steps() int { return t.steps }

// Close frees the trainer's leaves on the backend.
func (t *Trainer) Close() { t.bound.Free() }

// upload replaces the leaves on the backend with the host copies and frees
// the old ones.
func (t *Trainer) upload() error {
	b := t.b
	mark := b.Mark()
	defer func() { b.SweepSince(t.leafMark); t.leafMark = mark }()
	for i, lo := range t.bound.LoRAs {
		a := b.FromFloat32(t.host[2*i], lo.A.Shape(), tensor.Float32)
		bb := b.FromFloat32(t.host[2*i+1], lo.B.Shape(), tensor.Float32)
		b.Pin(a, bb)
		b.Unpin(lo.A, lo.B)
		lo.A, lo.B = a, bb
	}
	return b.Err()
}

// run computes the loss of rows and, with grads, the leaves' gradients
// (host float32, leaf order).
func (t *Trainer) run(rows []Row, grads bool) (StepMetrics, [][]float32, error) {
	var m StepMetrics
	if len(rows) == 0 {
		return m, nil, errors.New("train: an empty batch")
	}
	b := t.b
	if err := b.Err(); err != nil {
		return m, nil, fmt.Errorf("train: the backend failed before the step: %w", err)
	}
	vocab := t.text.Cfg.VocabSize
	obj := t.obj
	groups := make([][]*seq, len(rows))
	ntoks := 0
	for i := range rows {
		g, err := sequences(obj.Rows(), &rows[i], vocab)
		if err != nil {
			return m, nil, err
		}
		for _, s := range g {
			ntoks += s.tokens()
			s.n, s.row = t.nseq, &rows[i]
			if grads { // masks are drawn by training sequence: validation leaves them be
				t.nseq++
			}
		}
		groups[i] = g
	}
	b.ResetPeakMemory()
	t.mark = t.leafMark
	t.tapeBytes = 0
	t.grads = nil
	if grads {
		t.grads = make([]tensor.Tensor, len(t.names))
	}
	defer func() {
		t.group, t.grads = nil, nil
		t.tape.Reset()
		b.SweepSince(t.mark)
	}()
	var batch float64
	if bo, ok := obj.(BatchObjective); ok && t.opts.heldBatch != nil {
		batch = *t.opts.heldBatch
	} else if ok {
		var err error
		if batch, err = t.batchTerm(bo, rows, vocab); err != nil {
			return m, nil, err
		}
	}
	vals := make([]float64, len(obj.Metrics()))
	for _, g := range groups {
		t.group = g
		if err := t.withFeatures(g[0].row, g); err != nil {
			return m, nil, err
		}
		in := Group{Groups: len(rows), Counted: ntoks, Batch: batch, Opts: t.opts, Label: g[0].row.Label}
		for _, s := range g {
			if err := t.forward(s, t.text, grads); err != nil {
				return m, nil, err
			}
			if err := t.head(s, t.text, grads); err != nil {
				return m, nil, err
			}
			in.Sums, in.Tokens = append(in.Sums, s.sum), append(in.Tokens, s.tokens())
			if obj.Reference() {
				ref, err := t.frozenSum(&seq{ids: s.ids, a: s.a, e: s.e, row: s.row, feats: s.feats}, t.base, g)
				if err != nil {
					return m, nil, err
				}
				in.Refs = append(in.Refs, ref)
			}
		}
		loss, coeffs := obj.Loss(in, vals)
		m.Loss += loss
		if grads {
			for k, s := range g {
				if err := t.backward(s, coeffs[k]); err != nil {
					return m, nil, err
				}
				s.hs, s.kv, s.saved = nil, nil, 0
			}
		}
		if err := b.Err(); err != nil {
			return m, nil, err
		}
	}
	m.Terms = terms(obj.Metrics(), vals)
	m.Tokens = ntoks
	m.TapeBytes = t.tapeBytes
	if !grads {
		return m, nil, nil
	}
	out := make([][]float32, len(t.names))
	for i, g := range t.grads {
		if g == nil {
			out[i] = make([]float32, len(t.host[i]))
			continue
		}
		v, err := b.Float32s(g)
		if err != nil {
			return m, nil, err
		}
		out[i] = v
	}
	return m, out, nil
}

// withFeatures runs the frozen towers of r's media for the sequences g.
func (t *Trainer) withFeatures(r *Row, g []*seq) error {
	if len(r.Media) == 0 {
		return nil
	}
	feats, err := r.Features(t.b, t.m)
	if err != nil {
		return err
	}
	for _, s := range g {
		s.feats = feats
	}
	t.sweep(feats...)
	return nil
}

// frozenSum is f of s under text without a gradient, s held beside the
// group g while it runs.
func (t *Trainer) frozenSum(s *seq, text *gemma4.Text, g []*seq) (float64, error) {
	t.group = append(g[:len(g):len(g)], s)
	defer func() { t.group = g }()
	if err := t.forward(s, text, false); err != nil {
		return 0, err
	}
	if err := t.head(s, text, false); err != nil {
		return 0, err
	}
	return s.sum, nil
}

// batchTerm runs the sequences of a batch-level term under the policy and
// the reference (no gradient) and returns the objective's value of them.
func (t *Trainer) batchTerm(bo BatchObjective, rows []Row, vocab int) (float64, error) {
	var pol, ref []float64
	for _, x := range bo.Extra(rows) {
		if x.Start < 1 || x.Start >= len(x.IDs) || x.Row < 0 || x.Row >= len(rows) {
			return 0, fmt.Errorf("train: a batch-term sequence of %d tokens has targets from %d", len(x.IDs), x.Start)
		}
		r := &rows[x.Row]
		for _, id := range x.IDs {
			if id < 0 || int(id) >= vocab {
				return 0, fmt.Errorf("%s: token id %d is outside the model's vocabulary of %d", r.Source, id, vocab)
			}
		}
		s := &seq{ids: x.IDs, a: x.Start - 1, e: len(x.IDs) - 1, row: r, n: t.nseq}
		t.nseq++
		g := []*seq{s}
		t.group = g
		if err := t.withFeatures(r, g); err != nil {
			return 0, err
		}
		p, err := t.frozenSum(s, t.text, nil)
		if err != nil {
			return 0, err
		}
		q, err := t.frozenSum(&seq{ids: s.ids, a: s.a, e: s.e, row: r, feats: s.feats}, t.base, g)
		if err != nil {
			return 0, err
		}
		pol, ref = append(pol, p), append(ref, q)
	}
	t.group = nil
	return bo.Batch(pol, ref, t.opts), nil
}
