package engine

import (
	"fmt"
	"slices"
	"time"

	"perch/engine/gemma4"
	"perch/engine/kvcache"
	"perch/engine/mlx"
	"perch/engine/sample"
	"perch/engine/tensor"
)

// Compiled decode steps (MLX's CPU stream). Recording a decode step op by
// op costs the host a few hundred graph nodes per token; instead the whole
// step, the model's forward pass for one token and the greedy pick, is
// recorded once with mlx_compile (mlx.StepFunc) and replayed. A replay
// needs the same shapes every step, so the step attends over the caches'
// whole buffers under masks and writes the new keys and values at a slot
// given as a tensor (kvcache.Stepper), and the RoPE position is a tensor
// too (gemma4.Inputs.Position). Its inputs are the previous token (still
// unread: the pipeline is unchanged), the position, one slot and one mask
// per kind of cache, the suppressed-ids mask and the cache buffers; its
// results are the next token and the new buffers, which the caches take
// in place of the old ones (one buffer per cache, as before).
//
// MLX records the step once per input signature: per geometry of caches,
// and again when a full cache grows by a block (every 256 tokens). The
// engine records the common first geometry (full caches of one block) when
// it loads the model, so that a first answer does not pay for it. Only
// greedy decoding without a repetition penalty is compiled; everything
// else, and prefill, takes the ordinary path. Any failure (a trace that
// cannot be recorded, a kernel that does not build) leaves the caches as
// they were, and this engine stops compiling steps.
type stepCompiler struct {
	b     *mlx.Backend
	text  *gemma4.Text
	vocab int
	fns   map[string]*mlx.StepFunc // by input layout
	// ran holds the signatures evaluated once already: the first
	// evaluation of a recording builds its kernels, synchronously and
	// before the caches take its results.
	ran map[stepSig]bool
	err error // why compiled steps were turned off
	// logits makes steps also return their logits (tests).
	logits bool
	// opByOp runs the step's body as ordinary ops instead of replaying it
	// (tests: a replay must give the same bits).
	opByOp bool

	// The step being run (the body reads lay and pos when MLX traces it).
	lay   stepLayout
	pos   int
	fn    *mlx.StepFunc // the StepFunc of lay
	kinds [][3]int
	vis   [][]bool
	in    []tensor.Tensor
	bufs  []tensor.Tensor
	// evalTime is how long the last step spent evaluating (the first run
	// of a recording): the decode loop counts it as waiting, not as host
	// work.
	evalTime time.Duration
}

// stepLayout is how a step's inputs are laid out: [token, position,
// suppress?, slot and mask per group..., keys and values per cache...].
type stepLayout struct {
	caches   []int // cache index per buffer pair
	group    []int // group (shared slot and mask) per buffer pair
	groups   int
	suppress bool
}

func (l *stepLayout) equal(o *stepLayout) bool {
	return l.groups == o.groups && l.suppress == o.suppress && slices.Equal(l.caches, o.caches) &&
		slices.Equal(l.group, o.group)
}

// stepSig identifies a recording: the layout's StepFunc and each group's
// buffer length.
type stepSig struct {
	fn    *mlx.StepFunc
	sizes [4]int
}

// newStepCompiler returns a compiler for the engine's backend, or nil
// when steps cannot be compiled there.
func newStepCompiler(b tensor.Backend, text *gemma4.Text, vocab int) *stepCompiler {
	mb, ok := b.(*mlx.Backend)
	if !ok || !mb.StepsAvailable() {
		return nil
	}
	return &stepCompiler{b: mb, text: text, vocab: vocab, fns: map[string]*mlx.StepFunc{}, ran: map[stepSig]bool{}}
}

// step runs one compiled decode step after token y (int32 [1]): it returns
// the next token (and, for tests, the logits) and the caches hold one more
// token. false: nothing changed, take the ordinary path.
func (s *stepCompiler) step(y tensor.Tensor, caches []kvcache.Cache, suppress tensor.Tensor) (next, logits tensor.Tensor, ok bool) {
	s.evalTime = 0
	in, sig, ok := s.inputs(y, caches, suppress)
	if !ok {
		return nil, nil, false
	}
	b := s.b
	var out []tensor.Tensor
	var err error
	if s.opByOp {
		out = s.body(in)
	} else {
		out, _, err = s.fn.Call(in...)
	}
	if err == nil && len(out) != 1+len(s.bufs)+btoi(s.logits) {
		err = fmt.Errorf("compiled step: %d results", len(out))
	}
	if err == nil && !s.ran[sig] {
		t0 := time.Now()
		if err = b.Eval(out...); err == nil {
			s.ran[sig] = true
		}
		s.evalTime = time.Since(t0)
	}
	if err != nil {
		b.ClearErr()
		s.err = err
		return nil, nil, false
	}
	for k, i := range s.lay.caches {
		caches[i].(kvcache.Stepper).StepCommit(b, out[1+2*k], out[2+2*k])
	}
	if s.logits {
		logits = out[len(out)-1]
	}
	return out[0], logits, true
}

// inputs prepares the caches for a step and lays out its inputs, picking
// the StepFunc of the layout (s.fn).
func (s *stepCompiler) inputs(y tensor.Tensor, caches []kvcache.Cache, suppress tensor.Tensor) ([]tensor.Tensor, stepSig, bool) {
	b := s.b
	if s.err != nil || b.Err() != nil || !b.StepsAvailable() {
		return nil, stepSig{}, false
	}
	lay := stepLayout{suppress: suppress != nil}
	kinds, bufs := s.kinds[:0], s.bufs[:0]
	pos := -1
	for i, c := range caches {
		if c == nil {
			continue
		}
		st, ok := c.(kvcache.Stepper)
		if !ok || (pos >= 0 && c.Offset() != pos) || !st.StepReserve(b) {
			return nil, stepSig{}, false
		}
		pos = c.Offset()
		kind, g := st.StepKind(), -1
		for j, k := range kinds {
			if k == kind {
				g = j
			}
		}
		if g < 0 {
			g = len(kinds)
			kinds = append(kinds, kind)
		}
		lay.caches = append(lay.caches, i)
		lay.group = append(lay.group, g)
		bufs = append(bufs, c.State()...)
	}
	s.kinds, s.bufs = kinds, bufs
	lay.groups = len(kinds)
	if pos < 0 || lay.groups > len(stepSig{}.sizes) {
		return nil, stepSig{}, false
	}
	for len(s.vis) < lay.groups {
		s.vis = append(s.vis, nil)
	}

	in := append(s.in[:0], y, b.FromInt32([]int32{int32(pos)}, []int{1}))
	if suppress != nil {
		in = append(in, suppress)
	}
	for g := range lay.groups {
		k := slices.Index(lay.group, g)
		var slot int
		slot, s.vis[g] = caches[lay.caches[k]].(kvcache.Stepper).StepSlot(s.vis[g])
		st := in[1] // full caches write at the position
		if slot != pos {
			st = b.FromInt32([]int32{int32(slot)}, []int{1})
		}
		in = append(in, st, b.FromBool(s.vis[g], []int{1, len(s.vis[g])}))
	}
	in = append(in, bufs...)
	s.in = in[:0]

	if s.fn == nil || !lay.equal(&s.lay) {
		key := fmt.Sprint(lay.caches, lay.group, lay.suppress)
		fn := s.fns[key]
		if fn == nil && !s.opByOp {
			var err error
			if fn, err = b.CompileStep(s.body); err != nil {
				s.err = err
				return nil, stepSig{}, false
			}
			s.fns[key] = fn
		}
		s.lay, s.fn = lay, fn
	}
	s.pos = pos
	sig := stepSig{fn: s.fn}
	for g, k := range kinds {
		sig.sizes[g] = k[1]
	}
	return in, sig, true
}

// record traces the step for the geometry that caches have after a
// prompt of one token (full caches of one block) without running it.
func (s *stepCompiler) record(suppress tensor.Tensor) error {
	b, cfg := s.b, s.text.Cfg
	caches := s.text.NewCaches()
	defer func() {
		release(b, caches)
		b.Sweep(suppress)
	}()
	dt := s.text.DType()
	for i, c := range caches {
		if c != nil {
			kv := b.Zeros([]int{1, cfg.KVHeadsOf(i), 1, cfg.HeadDimOf(i)}, dt)
			c.Update(b, kv, kv)
		}
	}
	in, _, ok := s.inputs(b.Zeros([]int{1}, tensor.Int32), caches, suppress)
	if !ok {
		return fmt.Errorf("compiled step: %v", s.err)
	}
	if _, _, err := s.fn.Call(in...); err != nil {
		s.err = err
		return err
	}
	return nil
}

// body is the step as MLX traces it: the model's forward pass over views
// of the caches, then the greedy pick.
func (s *stepCompiler) body(in []tensor.Tensor) []tensor.Tensor {
	b, lay := s.b, &s.lay
	y, pos := in[0], in[1]
	i := 2
	var suppress tensor.Tensor
	if lay.suppress {
		suppress = in[i]
		i++
	}
	slot, mask := make([]tensor.Tensor, lay.groups), make([]tensor.Tensor, lay.groups)
	for g := range lay.groups {
		slot[g], mask[g] = in[i], in[i+1]
		i += 2
	}
	views := make([]kvcache.Cache, len(s.text.Layers))
	vs := make([]*kvcache.StepView, len(lay.caches))
	for k, c := range lay.caches {
		g := lay.group[k]
		vs[k] = &kvcache.StepView{Keys: in[i], Values: in[i+1], Slot: slot[g], Visible: mask[g], Pos: s.pos}
		views[c] = vs[k]
		i += 2
	}
	logits := s.text.Forward(gemma4.Inputs{IDs: b.Reshape(y, 1, 1), Position: pos}, views)
	out := []tensor.Tensor{sample.Greedy(b, logits, suppress, s.vocab)}
	for _, v := range vs {
		out = append(out, v.NewKeys, v.NewValues)
	}
	if s.logits {
		out = append(out, logits)
	}
	return out
}

// compiledSteps is the engine's step compiler, or nil.
func (e *Engine) compiledSteps() *stepCompiler {
	if e.steps == nil || e.steps.err != nil {
		return nil
	}
	return e.steps
}

// prepareSteps makes the engine's step compiler where steps can be
// compiled and records the first geometry (Open calls it).
func (e *Engine) prepareSteps() {
	s := newStepCompiler(e.b, e.model.Text, e.cfg.Text.VocabSize)
	if s == nil {
		return
	}
	e.steps = s
	sampler := sample.New(e.b, sample.Params{}, e.cfg.Text.VocabSize, e.gen.SuppressTokens)
	defer sampler.Release()
	s.record(sampler.Suppress()) // on failure s.err turns compiled steps off
}

func btoi(v bool) int {
	if v {
		return 1
	}
	return 0
}
