package train

import (
	"perch/engine/autodiff"
	"perch/engine/gemma4"
	"perch/engine/tensor"
)

// One sequence's forward and backward passes. With recompute (the
// default) the forward runs on the backend without a tape and keeps only
// each layer's input (and the keys/values of donor layers that KV-shared
// layers reuse); the backward then walks the layers from the top, re-running
// one layer at a time on a tape and backpropagating through it, so only one
// layer's activations are alive at a time. Without recompute the whole
// forward is recorded on one tape and kept until the backward.
//
// KV-shared layers read their donor's keys and values: the gradients they
// send to those are summed and fed into the donor layer's backward
// together with the gradient of its output. Everything below layer 0
// (embeddings, per-layer inputs, towers) is constant.

// seq is one sequence of a batch: ids and the logit positions [a, e) whose
// next tokens ids[j+1] count.
type seq struct {
	ids   []int32
	a, e  int
	n     int             // the sequence's number in its step (dropout masks)
	row   *Row            // the row it comes from (its media)
	feats []tensor.Tensor // the row's tower features (frozen), nil without media

	pre    gemma4.Prelude
	hs     []tensor.Tensor    // recompute: the input of each layer
	kv     [][2]tensor.Tensor // donors' keys and values (used by shared layers)
	hN     tensor.Tensor      // the last layer's output
	tape   *autodiff.Tape     // without recompute: the recorded forward
	params []*autodiff.Var    // without recompute: every leaf, in leaf order
	saved  int64              // bytes of hs and kv

	logps []float64     // log-probabilities of the counted targets
	sum   float64       // their sum
	dh    tensor.Tensor // ∂sum/∂hN
}

func (s *seq) tokens() int { return s.e - s.a }

// inputs is the sequence's model input: its ids, or with media the text
// embeddings with the towers' features spliced in (Row.Inputs).
func (t *Trainer) inputs(s *seq) (gemma4.Inputs, error) {
	if s.row == nil || len(s.row.Media) == 0 {
		return gemma4.Inputs{IDs: t.b.FromInt32(s.ids, []int{1, len(s.ids)})}, nil
	}
	return s.row.Inputs(t.b, t.text, s.ids, s.feats, int32(t.text.Cfg.PadTokenID))
}

// forward runs the policy (base + adapter) over s. keep saves what the
// backward needs; without it only hN is left (evaluation, references).
func (t *Trainer) forward(s *seq, text *gemma4.Text, keep bool) error {
	b := t.b
	NL := len(text.Layers)
	if keep && t.opts.NoRecompute {
		s.tape = autodiff.New(b)
		s.params = t.params(s.tape, nil)
		text = text.WithBackend(s.tape, t.tapeAdapter(s.params, nil))
	}
	in, err := t.inputs(s)
	if err != nil {
		return err
	}
	s.pre = text.Begin(in)
	if keep && !t.opts.NoRecompute {
		s.hs = make([]tensor.Tensor, NL)
		s.kv = make([][2]tensor.Tensor, NL)
	}
	h := s.pre.H
	kv := make([][2]tensor.Tensor, NL)
	for i := 0; i < NL; i++ {
		if s.hs != nil {
			s.hs[i] = h
			s.saved += autodiff.Bytes(h)
		}
		d := text.Cfg.KVDonor(i)
		var k, v tensor.Tensor
		if d != i {
			k, v = kv[d][0], kv[d][1]
		}
		t.dropout(s, i, text.Adapter)
		h, k, v = text.Layer(i, h, t.text.PerLayerInput(s.pre, i), text.Mask(s.pre, i), k, v)
		live := []tensor.Tensor{h}
		if t.donorUsed[i] {
			kv[i] = [2]tensor.Tensor{k, v}
			if s.kv != nil {
				s.kv[i] = kv[i]
				s.saved += autodiff.Bytes(k) + autodiff.Bytes(v)
			}
		}
		for _, x := range kv {
			live = append(live, x[0], x[1])
		}
		t.boundary(s, live...)
	}
	s.hN = h
	t.clearDropout()
	return b.Err()
}

// backward sends c·dh back through the layers, adding the leaves'
// gradients into t.grads.
func (t *Trainer) backward(s *seq, c float64) error {
	b := t.b
	seed := b.Mul(s.dh, b.Scalar(c, s.dh.DType()))
	if s.tape != nil {
		if err := s.tape.Backward([]tensor.Tensor{s.hN}, []tensor.Tensor{seed}); err != nil {
			return err
		}
		t.accumulate(s.params)
		t.account(s.tape.PeakBytes())
		s.tape.Reset()
		s.tape, s.params = nil, nil
		t.boundary(s)
		return nil
	}
	NL := len(t.text.Layers)
	cfg := t.text.Cfg
	dkv := make([][2]tensor.Tensor, NL) // gradients reaching each donor's k, v
	dh := seed
	tape := t.tape
	for i := NL - 1; i >= 0; i-- {
		tape.Reset()
		tape.ResetPeakBytes()
		// Layer 0's input is the embedding, constant: nothing below
		// needs its gradient, so its frozen input gradients are not taken.
		var hp *autodiff.Var
		var h tensor.Tensor = s.hs[i]
		if i > 0 {
			hp = tape.Param(s.hs[i])
			h = hp
		}
		params := t.params(tape, t.byLayer[i])
		text := t.text.WithBackend(tape, t.tapeAdapter(params, t.byLayer[i]))
		d := cfg.KVDonor(i)
		var kp, vp *autodiff.Var
		var k, v tensor.Tensor
		if d != i {
			kp, vp = tape.Param(s.kv[d][0]), tape.Param(s.kv[d][1])
			k, v = kp, vp
		}
		t.dropout(s, i, text.Adapter)
		out, kOut, vOut := text.Layer(i, h, t.text.PerLayerInput(s.pre, i), text.Mask(s.pre, i), k, v)
		outs, seeds := []tensor.Tensor{out}, []tensor.Tensor{dh}
		if d == i && dkv[i][0] != nil {
			outs = append(outs, kOut, vOut)
			seeds = append(seeds, dkv[i][0], dkv[i][1])
		}
		if err := tape.Backward(outs, seeds); err != nil {
			return err
		}
		if kp != nil {
			dkv[d] = [2]tensor.Tensor{t.add(dkv[d][0], kp.Grad()), t.add(dkv[d][1], vp.Grad())}
		}
		t.accumulate(params)
		dh = nil
		if hp != nil {
			dh = hp.Grad()
		}
		if dh == nil && i > 0 {
			dh = b.Zeros(s.hs[i].Shape(), s.hs[i].DType())
		}
		t.account(tape.PeakBytes())
		t.clearDropout()
		tape.Reset()
		live := []tensor.Tensor{dh}
		for _, g := range dkv {
			live = append(live, g[0], g[1])
		}
		t.boundary(s, live...)
	}
	return nil
}

func (t *Trainer) add(a, g tensor.Tensor) tensor.Tensor {
	switch {
	case g == nil:
		return a
	case a == nil:
		return g
	}
	return t.b.Add(a, g)
}

// params makes tape parameters of the leaves of targets (all when nil),
// indexed by leaf (2·target for A, 2·target+1 for B; nil elsewhere).
func (t *Trainer) params(tape *autodiff.Tape, targets []int) []*autodiff.Var {
	ps := make([]*autodiff.Var, 2*len(t.bound.Targets))
	each := func(i int) {
		lo := t.bound.LoRAs[i]
		ps[2*i], ps[2*i+1] = tape.Param(lo.A), tape.Param(lo.B)
	}
	if targets == nil {
		for i := range t.bound.Targets {
			each(i)
		}
	}
	for _, i := range targets {
		each(i)
	}
	return ps
}

// tapeAdapter binds the parameters ps to the projections of targets (all
// when nil), with the scale of the trainer's adapter.
func (t *Trainer) tapeAdapter(ps []*autodiff.Var, targets []int) gemma4.Adapter {
	ad := gemma4.Adapter{}
	for i, tg := range t.bound.Targets {
		if ps[2*i] != nil {
			ad[tg.Linear] = &gemma4.LoRA{A: ps[2*i], B: ps[2*i+1], Scale: t.bound.Scale}
		}
	}
	return ad
}

// accumulate adds the parameters' gradients into t.grads.
func (t *Trainer) accumulate(ps []*autodiff.Var) {
	for j, p := range ps {
		if p != nil && p.Grad() != nil {
			t.grads[j] = t.add(t.grads[j], p.Grad())
		}
	}
}

// boundary evaluates what the next layer needs, samples the memory and
// frees (on a lazy backend) everything of the step that is no longer used.
func (t *Trainer) boundary(s *seq, extra ...tensor.Tensor) {
	b := t.b
	var live []tensor.Tensor
	for _, x := range extra {
		if x != nil {
			live = append(live, autodiff.Value(x))
		}
	}
	b.Eval(live...)
	t.account(0)
	b.ActiveMemory()
	if s != nil && s.tape != nil {
		return // the recorded forward holds its values
	}
	t.sweep(live...)
}

// account records the activation memory in use: the saved layer inputs
// of the step's live sequences plus tape bytes.
func (t *Trainer) account(tape int64) {
	var n int64
	for _, s := range t.group {
		n += s.saved
		if s.tape != nil {
			n += s.tape.Bytes()
		}
	}
	t.tapeBytes = max(t.tapeBytes, n+tape)
}

// sweep frees the step's tensors except what the step still needs.
func (t *Trainer) sweep(extra ...tensor.Tensor) {
	for _, s := range t.group {
		if s.tape != nil {
			return // a recorded forward (no recompute) holds its values until its backward
		}
	}
	keep := append([]tensor.Tensor{}, extra...)
	for _, g := range t.grads {
		if g != nil {
			keep = append(keep, g)
		}
	}
	for _, s := range t.group {
		keep = append(keep, s.pre.H, s.pre.PLE, s.hN, s.dh)
		keep = append(keep, s.feats...)
		for _, m := range s.pre.Masks {
			keep = append(keep, m.Array)
		}
		keep = append(keep, s.hs...)
		for _, kv := range s.kv {
			keep = append(keep, kv[0], kv[1])
		}
	}
	var nonNil []tensor.Tensor
	for _, x := range keep {
		if x != nil {
			nonNil = append(nonNil, autodiff.Value(x))
		}
	}
	t.b.SweepSince(t.mark, nonNil...)
}
