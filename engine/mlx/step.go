package mlx

// Compiled steps: a whole function of tensors (the engine's decode step:
// the model's forward pass for one token and the greedy pick) recorded once
// by mlx_compile and replayed.
//
// On MLX's CPU stream recording a decode step op by op is most of the
// host's time per token (a few hundred graph nodes, each a cgo call and
// MLX's own array construction). A StepFunc is an mlx_compile'd closure
// whose body is Go: the first call with a new input signature (shapes and
// dtypes) makes MLX trace the body, which runs the ordinary ops of this
// package on tracer arrays (shim.c's step_body calls back into Go); MLX
// simplifies the traced graph, fuses its elementwise runs into CPU kernels
// and keeps it, and every later call with that signature replays it
// without reaching Go. Whatever changes from call to call must therefore be
// an input: the caller passes positions and masks as tensors and uses
// SliceUpdateDynamic and RoPEDynamic, whose offsets are tensors.
//
// While a body is traced the backend is in tracing mode:
//   - Sweep and SweepSince do nothing (the trace's arrays are freed when the
//     trace ends); Eval and readback fail, and so do the ops that would bake
//     a position or a seed into the graph (SliceUpdate, RoPE with an int
//     offset, Categorical) and LayerNorm (see below).
//   - Compiled composites are off (MLX would trace through them anyway).
//   - Fused CPU kernels print scalar constants with 7 significant digits
//     (see printsExactly), so a float32 scalar that would not survive that
//     (an RMSNorm's 1/n, 2^-0.5, -Inf, a [1] weight) reaches the graph behind
//     a Contiguous node, which the compiler reads from memory instead; new
//     scalars are evaluated at once so that the trace holds them as
//     constants of their own dtype, and RMSNorm is composed here op for op
//     as MLX's CPU fallback composes it, with such constants.
//
// The results are the ops' own, bit for bit, except where the caller
// changes the computation to get fixed shapes (attending over whole cache
// buffers under a mask sums the same terms in another order).
//
// Kernels are built the first time a new trace is evaluated, so a call
// that traced arms the same JIT guard as a new composite (fast.go): the
// next evaluations run synchronously under the JIT lock.

import (
	"errors"
	"math"
	"sync"
	"unsafe"

	"perch/engine/tensor"
)

// maxStepResults bounds the results of one step.
const maxStepResults = 256

// StepFunc is a compiled function of tensors. Like the Backend it belongs
// to, it is used on one thread; Close frees it (Backend.Close does too).
type StepFunc struct {
	b      *Backend
	id     uintptr
	c      closure
	p      *stepPayload
	body   func(in []tensor.Tensor) []tensor.Tensor
	traces int
	err    error // why the last trace failed
	broken error // a failed trace leaves MLX's record of it unusable
	ins    []handle
	outs   []handle
}

// traceState is the backend's state while a step's body is traced.
type traceState struct {
	f       *StepFunc
	mark    uint64             // arrays made since mark belong to the trace
	compile bool               // the backend's compile flag, restored afterwards
	opaque  map[uintptr]*Array // constants behind Contiguous nodes, by handle
	exact   map[uintptr]bool   // constants that print exactly
	scalars map[scalarKey]*Array
	ropes   []traceRoPE
}

// traceRoPE is one set of in-graph RoPE tables of a trace.
type traceRoPE struct {
	dims, dt int
	base     float32
	scale    float32
	freqs    *Array
	offset   *Array
	cs, sn   handle
}

// The body of a step is found from C by id.
var (
	stepMu   sync.Mutex
	stepLast uintptr
	stepFns  = map[uintptr]*StepFunc{}
)

// StepsAvailable reports whether CompileStep can be used: on the CPU stream,
// with compiled composites on (PERCH_MLX_COMPILE unset or 1) and the C++
// compiler probe passed, and with the mlx-c functions steps need.
func (b *Backend) StepsAvailable() bool {
	return !b.closed && b.tracing == nil && b.steps && cStepAvailable() && b.compiled()
}

// CompileStep makes a compiled step of body, which maps the step's inputs
// to its results with this backend's ops. Nothing is traced until the
// first Call.
func (b *Backend) CompileStep(body func(in []tensor.Tensor) []tensor.Tensor) (*StepFunc, error) {
	if !b.StepsAvailable() {
		return nil, errors.New("mlx: compiled steps are not available here")
	}
	f := &StepFunc{b: b, body: body}
	stepMu.Lock()
	stepLast++
	f.id = stepLast
	stepFns[f.id] = f
	stepMu.Unlock()
	c, p, m := cStepNew(f.id)
	if m != nil {
		err := errors.New("mlx: compile step: " + goString(m))
		f.unregister()
		return nil, err
	}
	f.c, f.p = c, p
	b.stepFns = append(b.stepFns, f)
	return f, nil
}

// Traces is how many times MLX traced the body (once per new input
// signature).
func (f *StepFunc) Traces() int { return f.traces }

// Call runs the step on in and returns its results as new arrays of the
// arena; traced reports that this call traced the body. It needs a backend
// without a pending error, and on failure leaves none behind: the caller
// can take another path.
func (f *StepFunc) Call(in ...tensor.Tensor) (out []tensor.Tensor, traced bool, err error) {
	b := f.b
	if f.c.ctx == 0 {
		return nil, false, errors.New("mlx: compiled step is closed")
	}
	if f.broken != nil {
		return nil, false, f.broken
	}
	if b.err != nil {
		return nil, false, b.err
	}
	ins := f.ins[:0]
	for _, t := range in {
		h, ok := b.in("compiled step", t)
		if !ok {
			err := b.err
			b.err = nil
			return nil, false, err
		}
		ins = append(ins, h)
	}
	f.ins = ins
	if f.outs == nil {
		f.outs = make([]handle, maxStepResults)
	}
	before := f.traces
	f.err = nil
	n, m := cStepApply(f.c, f.p, ins, f.outs)
	clear(f.ins)
	traced = f.traces != before
	if m != nil || f.err != nil {
		cFreeMany(f.outs[:n])
		clear(f.outs[:n])
		err := f.err
		if err == nil {
			err = errors.New("mlx: compiled step: " + goString(m))
		}
		if traced {
			f.broken = err
		}
		return nil, traced, err
	}
	out = make([]tensor.Tensor, n)
	for i, h := range f.outs[:n] {
		out[i] = b.track(h)
	}
	clear(f.outs[:n])
	if traced {
		b.warm = warmEvals // its first evaluations build the fused kernels
	}
	return out, traced, nil
}

// Close frees the step and MLX's recorded graphs of it.
func (f *StepFunc) Close() {
	if f.c.ctx == 0 {
		return
	}
	cFnFree(f.c)
	f.c, f.p = closure{}, nil
	f.unregister()
	b := f.b
	for i, g := range b.stepFns {
		if g == f {
			b.stepFns = append(b.stepFns[:i], b.stepFns[i+1:]...)
			break
		}
	}
}

func (f *StepFunc) unregister() {
	stepMu.Lock()
	delete(stepFns, f.id)
	stepMu.Unlock()
}

// stepTrace runs a step's body on MLX's tracer inputs (perchStepTrace).
func stepTrace(id uintptr, in vector, out *vector) int {
	stepMu.Lock()
	f := stepFns[id]
	stepMu.Unlock()
	if f == nil {
		return 1
	}
	b := f.b
	f.traces++
	if b.tracing != nil || b.err != nil || b.closed {
		f.err = errors.New("mlx: compiled step traced inside another trace or after an error")
		return 1
	}
	t := &traceState{f: f, mark: b.Mark(), compile: b.compile}
	b.tracing, b.compile = t, false
	defer b.endTrace()

	n := cVectorSize(in)
	ins := make([]tensor.Tensor, n)
	for i := range ins {
		h, m := cVectorGet(in, i)
		if m != nil {
			f.err = errors.New("mlx: compiled step input: " + goString(m))
			return 1
		}
		ins[i] = b.track(h)
	}
	var outs []tensor.Tensor
	func() {
		defer func() {
			if r := recover(); r != nil {
				b.fail("compiled step", "panic while tracing: %v", r)
			}
		}()
		outs = f.body(ins)
	}()
	if b.err == nil && len(outs) > maxStepResults {
		b.fail("compiled step", "%d results (at most %d)", len(outs), maxStepResults)
	}
	hs := make([]handle, 0, len(outs))
	for _, o := range outs {
		h, ok := b.in("compiled step result", o)
		if !ok {
			break
		}
		hs = append(hs, h)
	}
	for _, a := range b.pinned {
		if a.seq >= t.mark {
			b.fail("compiled step", "the body pinned an array (it would outlive the trace)")
			break
		}
	}
	if b.err != nil {
		f.err = b.err
		return 1
	}
	if m := cVectorSet(out, hs); m != nil {
		f.err = errors.New("mlx: compiled step results: " + goString(m))
		return 1
	}
	return 0
}

// endTrace leaves tracing mode: every array the trace made (MLX's recorded
// graph keeps what it needs) and its pending error go.
func (b *Backend) endTrace() {
	t := b.tracing
	b.tracing, b.compile = nil, t.compile
	for _, a := range b.pinned {
		if a.seq >= t.mark {
			b.Unpin(a)
		}
	}
	b.err = nil // kept in the StepFunc
	b.sweep(t.mark, nil)
}

// traceFail records that an op cannot be part of a compiled step.
func (b *Backend) traceFail(op string) bool {
	if b.tracing == nil {
		return false
	}
	b.fail(op, "not allowed while a compiled step is traced")
	return true
}

// traceConst returns the handle a trace should use for the size-1 array h
// of mlx dtype dt: h itself, or h behind a Contiguous node when it is a
// float32 value that a fused kernel would not print exactly. h must be an
// array the trace does not depend on (its value is read).
func (b *Backend) traceConst(h handle, dt int) (handle, bool) {
	t := b.tracing
	if dt != mxFloat32 {
		return h, true
	}
	if o, ok := t.opaque[uintptr(h.ctx)]; ok {
		return o.h, true
	}
	if t.exact[uintptr(h.ctx)] {
		return h, true
	}
	var v [1]float32
	if m := cReadF32(h, v[:], b.s); m != nil {
		b.failC("compiled step constant", m)
		return handle{}, false
	}
	if printsExactly(v[0]) {
		if t.exact == nil {
			t.exact = map[uintptr]bool{}
		}
		t.exact[uintptr(h.ctx)] = true
		return h, true
	}
	o, m := cContiguous(h, b.s)
	if m != nil {
		b.failC("compiled step constant", m)
		return handle{}, false
	}
	if t.opaque == nil {
		t.opaque = map[uintptr]*Array{}
	}
	t.opaque[uintptr(h.ctx)] = b.track(o) // freed with the trace
	return o, true
}

type scalarKey struct {
	bits uint64
	dt   int
}

// traceScalarOf is Scalar while a step is traced: one constant per value
// and dtype, of its own dtype (a float16 or bfloat16 one is evaluated: not
// a cast node) and behind a Contiguous node when a fused kernel would not
// print it exactly.
func (b *Backend) traceScalarOf(v float64, dt int) tensor.Tensor {
	t := b.tracing
	k := scalarKey{math.Float64bits(v), dt}
	if a := t.scalars[k]; a != nil {
		return a
	}
	h, m := cScalar(v, dt, b.s)
	if m != nil {
		return b.out("scalar", h, m)
	}
	a := b.track(h)
	switch dt {
	case mxFloat32:
		if !printsExactly(float32(v)) {
			o, m := cContiguous(h, b.s)
			if m != nil {
				return b.out("scalar", o, m)
			}
			a = b.track(o)
		}
	case mxFloat16, mxBFloat16:
		if m := cEval([]handle{h}, false); m != nil {
			b.failC("scalar", m)
			return b.empty
		}
	}
	if t.scalars == nil {
		t.scalars = map[scalarKey]*Array{}
	}
	t.scalars[k] = a
	return a
}

// traceIn is in's rule for arrays made before the trace: a size-1 float32
// one goes through traceConst.
func (b *Backend) traceIn(a *Array) (handle, bool) {
	if a.seq >= b.tracing.mark {
		return a.h, true
	}
	d := a.dims()
	n := 1
	for _, v := range d {
		n *= v
	}
	if n != 1 {
		return a.h, true
	}
	return b.traceConst(a.h, int(a.mdt))
}

// traceScalar makes a new scalar a constant of its own dtype (evaluated
// now) that prints exactly, or puts it behind a Contiguous node.
func (b *Backend) traceScalar(h handle, dt int) (handle, bool) {
	if m := cEval([]handle{h}, false); m != nil {
		b.failC("compiled step constant", m)
		return handle{}, false
	}
	return b.traceConst(h, dt)
}

// rmsNormTraced is mlx.fast.rms_norm as MLX's CPU fallback composes it
// (fast.cpp), with eps and the mean's 1/n as traceable constants:
// astype(x * rsqrt(sum(x^2) * (1/n) + eps), out) * w, in float32.
func (b *Backend) rmsNormTraced(x, w tensor.Tensor, eps float32) tensor.Tensor {
	xa, ok := b.arr("rms norm", x)
	if !ok {
		return b.empty
	}
	d := xa.dims()
	if len(d) == 0 {
		b.fail("rms norm", "needs at least one axis")
		return b.empty
	}
	out := xa.DType()
	if w != nil {
		wa, ok := b.arr("rms norm", w)
		if !ok {
			return b.empty
		}
		if wd := wa.DType(); wd != out {
			out = tensor.Float32 // float16 with bfloat16, or either with float32
		}
		if wa.DType() != out {
			w = b.AsType(w, out)
		}
	}
	x32 := b.AsType(x, tensor.Float32)
	h, ok := b.in("rms norm", x32)
	if !ok {
		return b.empty
	}
	sq, m := cSquare(h, b.s)
	if m != nil {
		b.failC("rms norm", m)
		return b.empty
	}
	ms := b.Sum(b.track(sq), -1, true)
	ms = b.Mul(ms, b.Scalar(1/float64(d[len(d)-1]), tensor.Float32))
	r := b.Rsqrt(b.Add(ms, b.Scalar(float64(eps), tensor.Float32)))
	y := b.AsType(b.Mul(x32, r), out)
	if w != nil {
		y = b.Mul(y, w)
	}
	return y
}

// SliceUpdateDynamic writes src into dst along axis starting at start, an
// int32 [1] tensor (mlx.slice_update with a dynamic start): the same
// graph serves every start. dst must not be used afterwards.
func (b *Backend) SliceUpdateDynamic(dst, src, start tensor.Tensor, axis int) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	if !cStepAvailable() {
		b.fail("slice update", "mlx-c lacks mlx_slice_update_dynamic")
		return b.empty
	}
	d, ok1 := b.arr("slice update", dst)
	s, ok2 := b.arr("slice update", src)
	hs, ok3 := b.in("slice update", start)
	if !ok1 || !ok2 || !ok3 {
		return b.empty
	}
	ax, ok := b.axis("slice update", axis, len(d.dims()))
	if !ok {
		return b.empty
	}
	if len(s.dims()) != len(d.dims()) {
		b.fail("slice update", "src rank %d != dst rank %d", len(s.dims()), len(d.dims()))
		return b.empty
	}
	h, m := cSliceUpdateDynamic(d.h, s.h, hs, ax, b.s)
	return b.out("slice update", h, m)
}

// RoPEDynamic is RoPE at position offset, an int32 [1] tensor. For one
// position of a fast-path shape it rotates with tables computed in the
// graph exactly as ropeTables computes them on the host (so the results
// are RoPE's bit for bit); otherwise it is mlx.fast.rope with a dynamic
// offset.
func (b *Backend) RoPEDynamic(x tensor.Tensor, dims int, traditional bool, base, scale float32, offset, freqs tensor.Tensor) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hx, ok1 := b.in("rope", x)
	ho, ok2 := b.in("rope", offset)
	hf, ok3 := b.opt("rope", freqs)
	if !ok1 || !ok2 || !ok3 {
		return b.empty
	}
	if b.fast && !traditional {
		if h, ok := b.ropeDynamicFast(x, dims, base, scale, offset, freqs); ok {
			return b.track(h)
		}
		if b.err != nil {
			return b.empty
		}
	}
	if !cStepAvailable() {
		b.fail("rope", "mlx-c lacks mlx_fast_rope_dynamic")
		return b.empty
	}
	h, m := cRoPEDynamic(hx, dims, traditional, isNull(hf), base, scale, ho, hf, b.s)
	return b.out("rope", h, m)
}

// ropeDynamicFast is ropeFast for x [B, N, 1, dims] at a tensor position:
// theta = float32(offset) * scale * inv_freq (each angle twice), C =
// cos(theta), S = sin(theta) * sign in x's dtype, x*C + swap(x)*S.
func (b *Backend) ropeDynamicFast(x tensor.Tensor, dims int, base, scale float32, offset, freqs tensor.Tensor) (handle, bool) {
	a, oa := b.own(x), b.own(offset)
	if a == nil || oa == nil {
		return handle{}, false
	}
	d := a.dims()
	if len(d) != 4 || d[2] != 1 || d[3] != dims || dims%2 != 0 || dims == 0 {
		return handle{}, false
	}
	if od := oa.dims(); len(od) != 1 || od[0] != 1 || oa.mdt != mxInt32 {
		return handle{}, false
	}
	var fa *Array
	if hf, _ := b.opt("rope", freqs); !isNull(hf) {
		if fa = b.own(freqs); fa == nil {
			return handle{}, false
		}
		base = 0
	}
	dt := int(a.mdt)
	cs, sn, ok := b.ropeDynamicTables(dims, base, scale, fa, oa, dt)
	if !ok {
		return handle{}, false
	}
	return b.ropeRotate(a, cs, sn, false)
}

// ropeDynamicTables returns C and S [dims] for one position given as a
// tensor; a trace shares them between the layers that use them, otherwise
// they live until the next Sweep.
func (b *Backend) ropeDynamicTables(dims int, base, scale float32, freqs, offset *Array, dt int) (handle, handle, bool) {
	t := b.tracing
	if t != nil {
		for _, r := range t.ropes {
			if r.dims == dims && r.dt == dt && r.base == base && r.scale == scale && r.freqs == freqs && r.offset == offset {
				return r.cs, r.sn, true
			}
		}
	}
	r := b.ropeInvEntry(dims, base, freqs)
	if r == nil {
		return handle{}, handle{}, false
	}
	if isNull(r.inv2) {
		inv2 := make([]float32, 0, dims)
		inv2 = append(append(inv2, r.inv...), r.inv...)
		h, m := cFromData(unsafe.Pointer(&inv2[0]), []int32{int32(dims)}, mxFloat32, mxFloat32, b.s)
		if m != nil {
			return handle{}, handle{}, false
		}
		r.inv2 = h
	}
	sign, ok := b.ropeSign(dims, dt)
	if !ok {
		return handle{}, handle{}, false
	}
	// theta = float32(offset) [* scale] * inv2, as ropeTables' p*f.
	pos := b.AsType(offset, tensor.Float32)
	if scale != 1 {
		pos = b.Mul(pos, b.Scalar(float64(scale), tensor.Float32))
	}
	hp, ok := b.in("rope", pos)
	if !ok {
		return handle{}, handle{}, false
	}
	th, m := cBinary(opMul, hp, r.inv2, b.s)
	if m != nil {
		b.failC("rope", m)
		return handle{}, handle{}, false
	}
	theta := b.track(th)
	cs := b.AsType(b.Cos(theta), fromMLXDType(dt))
	hc, ok1 := b.in("rope", cs)
	hs, ok2 := b.in("rope", b.AsType(b.Sin(theta), fromMLXDType(dt)))
	if !ok1 || !ok2 {
		return handle{}, handle{}, false
	}
	sh, m := cBinary(opMul, hs, sign, b.s)
	if m != nil {
		b.failC("rope", m)
		return handle{}, handle{}, false
	}
	hs = b.track(sh).h
	if t != nil {
		t.ropes = append(t.ropes, traceRoPE{dims: dims, dt: dt, base: base, scale: scale, freqs: freqs, offset: offset, cs: hc, sn: hs})
	}
	return hc, hs, true
}

var _ tensor.Dynamic = (*Backend)(nil)
