package mlx

// Host-time shortcuts on MLX's CPU stream.
//
// On the CPU every mx.fast op (rms_norm, rope, scaled_dot_product_attention)
// expands into its composed fallback while the graph is recorded, so a
// decode step of even the tiny model records ~1350 nodes, and recording
// them is most of the host's time per step. Two kinds of shortcut bring
// that under 400 without changing a single bit of the results (fast_test.go
// checks each against MLX's own graphs):
//
//   - Graph shortcuts, which need nothing but MLX: Linear multiplies by a
//     cached W.T (one Matmul node instead of four); RoPE rotates with cos/sin
//     tables made once per step and shared by every layer with the same
//     parameters (x*C + swap(x)*S, the fallback's arithmetic element for
//     element); SDPA without a mask broadcasts k and v over the query heads
//     instead of splitting the heads (the same GEMMs, half the nodes).
//   - Compiled composites: mlx_compile over our own C functions (shim.c) for
//     GeluTanh, RMSNorm and the RoPE rotation on decode-sized inputs. MLX
//     traces each once per input signature and replays a few nodes whose
//     elementwise runs are fused into single kernels (GeluTanh: 1 node
//     instead of 13; RMSNorm: 3 instead of 11). On the CPU, MLX builds a
//     fused kernel the first time it evaluates it, with the system C++
//     compiler ("g++" on PATH, into <tmp>/mlx/<version>/cpu, kept across
//     runs): about half a second per kernel, about ten per model and dtype.
//     Fused kernels write scalar constants with 7 significant digits, so a
//     composite whose float32 constants would not read back exactly (an
//     RMSNorm over 48 values: 1/48) is not compiled.
//
// A failed kernel build inside an asynchronous evaluation could leave MLX
// waiting forever, so the compiler is probed once per process (a compiled
// GeluTanh must build, trace once and match the uncompiled op bit for bit)
// before any composite is compiled, and after a composite traces a new
// input signature the next evaluations run synchronously while holding an
// exclusive lock (<tmp>/mlx/perch-jit.lock), so that Perch processes never
// build the same kernel at once. If the probe fails (no g++, or compilation
// disabled with MLX_DISABLE_COMPILE), composites stay off; if a build still
// fails during a (synchronous) evaluation, that evaluation's error is
// reported and composites are turned off for the process.
//
// PERCH_MLX_COMPILE=0 turns every shortcut off (the graphs are then the
// original op-by-op ones), PERCH_MLX_COMPILE=graph keeps only the graph
// shortcuts, PERCH_MLX_COMPILE=composites keeps compiled composites but no
// compiled decode steps (step.go). The GPU stream never uses them: there the fast ops are single
// kernels already.

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"perch/engine/tensor"
)

const (
	// maxRows bounds the rows (elements / last axis) of a decode-sized
	// input (see decodeSized).
	maxRows = 64
	// maxTraces retires a composite that keeps seeing new signatures.
	maxTraces = 256
	// maxRoPETables bounds the tables kept between full Sweeps.
	maxRoPETables = 32
	// warmEvals is how many evaluations after a new trace run synchronously
	// under the JIT lock (they may build kernels).
	warmEvals = 8
)

// Shortcut levels (PERCH_MLX_COMPILE).
const (
	shortcutsOff = iota
	shortcutsGraph
	shortcutsComposites // compiled composites, no compiled steps
	shortcutsAll
)

func shortcutSetting() int {
	switch strings.ToLower(strings.TrimSpace(os.Getenv("PERCH_MLX_COMPILE"))) {
	case "0", "off", "false", "no":
		return shortcutsOff
	case "graph":
		return shortcutsGraph
	case "composites":
		return shortcutsComposites
	}
	return shortcutsAll
}

// fnKey names one compiled composite: its kind, dtype and static parameters.
type fnKey struct {
	kind int32
	dt   int32
	i    [2]int32
	f    [2]float32
}

type fnEntry struct {
	c       closure
	payload *fnPayload // C memory
	traces  int
	calls   int
	ok      bool
}

// ropeTable holds one step's RoPE tables for one set of parameters.
type ropeTable struct {
	t, dims, offset, dt int
	base, scale         float32
	freqs               *Array
	freqsSeq            uint64
	cs, sn              handle
}

// ropeInv holds the inverse frequencies of one RoPE configuration as MLX
// computes them (read back once).
type ropeInv struct {
	dims     int
	base     float32
	freqs    *Array
	freqsSeq uint64
	inv      []float32
	inv2     handle // float32 [dims]: inv twice, for in-graph angles (step.go); made on first use
}

// The JIT probe runs once per process.
var (
	jitOnce   sync.Once
	jitErr    error
	jitBroken atomic.Bool // a kernel build failed during evaluation
	jitMu     sync.Mutex
	jitTime   time.Duration // spent in the probe and in warm evaluations
)

// JITTime is the time this process spent probing the C++ compiler and in
// evaluations that could build fused CPU kernels (the first-use cost of
// compiled composites; mostly g++ when the kernels are not on disk yet).
func JITTime() time.Duration {
	jitMu.Lock()
	defer jitMu.Unlock()
	return jitTime
}

func addJITTime(d time.Duration) {
	jitMu.Lock()
	jitTime += d
	jitMu.Unlock()
}

// Shortcuts reports which host-time shortcuts the backend uses: "off",
// "graph" or "compiled" (compiled composites are decided on first use, so
// "compiled" may still fall back to "graph").
func (b *Backend) Shortcuts() string {
	switch {
	case b.compile:
		return "compiled"
	case b.fast:
		return "graph"
	}
	return "off"
}

// initShortcuts decides the backend's shortcuts (New calls it).
func (b *Backend) initShortcuts() {
	if b.gpu || !cFastAvailable() {
		return
	}
	level := shortcutSetting()
	b.fast = level >= shortcutsGraph
	b.compile = level >= shortcutsComposites
	b.steps = level >= shortcutsAll
}

// compiled reports whether compiled composites may be used, probing the
// compiler on first use.
func (b *Backend) compiled() bool {
	if !b.compile {
		return false
	}
	jitOnce.Do(func() {
		t0 := time.Now()
		jitErr = b.probeJIT()
		addJITTime(time.Since(t0))
	})
	if jitErr != nil || jitBroken.Load() {
		b.compile = false
	}
	return b.compile
}

// probeJIT checks that MLX can build a fused CPU kernel here: a compiled
// GeluTanh of float32 values must trace once for two calls and match the
// uncompiled op bit for bit.
func (b *Backend) probeJIT() error {
	if _, err := exec.LookPath("g++"); err != nil {
		return err
	}
	unlock := jitLock()
	defer unlock()
	c, ok := b.constants("jit probe", mxFloat32)
	if !ok {
		return b.err
	}
	consts := append([]handle(nil), c[:5]...) // cgo: not a pointer into the Backend
	if m := cEval(consts, false); m != nil {
		return errors.New(goString(m))
	}
	f, p, m := cFnNew(fnGeluTanh, [2]int32{}, [2]float32{}, consts, true, b.s)
	if m != nil {
		return errors.New(goString(m))
	}
	defer cFnFree(f)
	data := []float32{-3, -0.5, 0.25, 2.5, 7}
	x, m := cFromData(unsafe.Pointer(&data[0]), []int32{5}, mxFloat32, mxFloat32, b.s)
	if m != nil {
		return errors.New(goString(m))
	}
	var hs []handle
	defer func() { cFreeMany(hs) }()
	hs = append(hs, x)
	want, m := cGeluTanh(x, (*[5]handle)(c[:5]), b.s)
	if m != nil {
		return errors.New(goString(m))
	}
	hs = append(hs, want)
	var got [2]handle
	for i := range got {
		if got[i], m = cFnApply(f, p, []handle{x}); m != nil {
			return errors.New(goString(m))
		}
		hs = append(hs, got[i])
	}
	if n := cFnTraces(p); n != 1 {
		return errors.New("mlx compile is disabled (traced " + strconv.Itoa(n) + " times)")
	}
	if m := cEval(hs[1:], false); m != nil {
		return errors.New(goString(m))
	}
	w := make([]float32, len(data))
	g := make([]float32, len(data))
	if m := cReadF32(want, w, b.s); m != nil {
		return errors.New(goString(m))
	}
	for _, h := range got {
		if m := cReadF32(h, g, b.s); m != nil {
			return errors.New(goString(m))
		}
		for i := range w {
			if math.Float32bits(w[i]) != math.Float32bits(g[i]) {
				return errors.New("compiled GeluTanh differs from the uncompiled op")
			}
		}
	}
	return nil
}

// fn returns the compiled composite for key, compiling it on first use; nil
// when it cannot be used.
//
// usable, when not nil, is asked once, before compiling: false leaves the
// key unusable (the constants the composite would print, say).
func (b *Backend) fn(key fnKey, consts []handle, shapeless bool, usable func() bool) *fnEntry {
	if e, ok := b.fns[key]; ok {
		if !e.ok {
			return nil
		}
		return e
	}
	if b.fns == nil {
		b.fns = map[fnKey]*fnEntry{}
	}
	e := &fnEntry{}
	b.fns[key] = e
	if usable != nil && !usable() {
		return nil
	}
	if len(consts) > 0 {
		consts = append([]handle(nil), consts...) // cgo: not a pointer into the Backend
		// Captured constants must be evaluated arrays, which the trace
		// keeps as constants instead of nodes to replay.
		if m := cEval(consts, false); m != nil {
			return nil
		}
	}
	c, p, m := cFnNew(int(key.kind), key.i, key.f, consts, shapeless, b.s)
	if m != nil {
		return nil
	}
	e.c, e.payload, e.ok = c, p, true
	return e
}

// call applies a compiled composite; false means it failed and the caller
// takes the uncompiled path (which reports any error the usual way).
func (b *Backend) call(e *fnEntry, in ...handle) (handle, bool) {
	h, m := cFnApply(e.c, e.payload, in)
	if m != nil {
		if !isNull(h) {
			cFreeMany([]handle{h})
		}
		return handle{}, false
	}
	e.calls++
	if n := cFnTraces(e.payload); n != e.traces {
		e.traces = n
		b.warm = warmEvals // the next evaluations may build its kernels
		if n > maxTraces {
			b.retire(e)
		}
	}
	return h, true
}

// retire stops using a composite (graphs already recorded keep working).
func (b *Backend) retire(e *fnEntry) {
	if e.ok {
		cFnFree(e.c)
		e.c, e.payload, e.ok = closure{}, nil, false
	}
}

// evalGuarded runs an evaluation. In the warm window after a new trace it
// is synchronous and holds the JIT lock; a failed kernel build then turns
// compiled composites off for the process.
func (b *Backend) evalGuarded(run func(async bool) cmsg, async bool) cmsg {
	if b.warm <= 0 {
		return run(async)
	}
	b.warm--
	t0 := time.Now()
	unlock := jitLock()
	m := run(false)
	unlock()
	addJITTime(time.Since(t0))
	if m != nil && isJITFailure(goString(m)) {
		jitBroken.Store(true)
		b.compile = false
	}
	return m
}

func isJITFailure(msg string) bool {
	return strings.Contains(msg, "[Compile::eval_cpu]") || strings.Contains(msg, "Could not load C++ shared library")
}

// freeShortcuts releases the compiled composites and cached tables (Close).
func (b *Backend) freeShortcuts() {
	for k, e := range b.fns {
		b.retire(e)
		delete(b.fns, k)
	}
	b.dropRoPETables()
	for k, h := range b.ropeConsts {
		cFreeMany([]handle{h})
		delete(b.ropeConsts, k)
	}
	for _, r := range b.ropeInvs {
		if !isNull(r.inv2) {
			cFreeMany([]handle{r.inv2})
		}
	}
	b.ropeInvs = nil
}

// printsExactly reports whether a float32 constant survives the way MLX
// writes a fused CPU kernel's scalar constants: 7 significant digits, read
// back as a double and narrowed. (bfloat16 and float16 values always do.)
func printsExactly(v float32) bool {
	if math.IsInf(float64(v), 0) || math.IsNaN(float64(v)) {
		return false
	}
	f, err := strconv.ParseFloat(strconv.FormatFloat(float64(v), 'g', 7, 64), 64)
	return err == nil && float32(f) == v
}

// decodeSized reports whether an activation of shape d covers one position
// (the time axis, axis t, is 1) and at most maxRows rows. Composites
// compiled per input shape take only these: their shapes repeat every
// decode step, while prompts of every length would each add an entry (and
// its constants) to MLX's compile cache.
func decodeSized(d []int, t int) bool {
	return len(d) > t && t >= 0 && d[t] == 1 && rows(d) <= maxRows
}

// rows is the number of last-axis rows of a (1 for a 0-d array).
func rows(d []int) int {
	n := 1
	for _, v := range d[:max(len(d)-1, 0)] {
		n *= v
	}
	return n
}

// geluCompiled is GeluTanh as one fused node for decode-sized x [B, 1, ..],
// or false.
func (b *Backend) geluCompiled(a *Array, c *[6]handle) (handle, bool) {
	if !decodeSized(a.dims(), 1) || !b.compiled() {
		return handle{}, false
	}
	e := b.fn(fnKey{kind: fnGeluTanh, dt: int32(a.mdt)}, c[:5], false, func() bool {
		if a.mdt != mxFloat32 {
			return true
		}
		for _, v := range []float32{0.5, 3, 0.044715, float32(math.Sqrt(2 / math.Pi)), 1} {
			if !printsExactly(v) {
				return false
			}
		}
		return true
	})
	if e == nil {
		return handle{}, false
	}
	return b.call(e, a.h)
}

// rmsNormCompiled is RMSNorm as three nodes (square, sum, one fused kernel)
// for decode-sized x [B, 1, ...], or false.
func (b *Backend) rmsNormCompiled(x tensor.Tensor, hx, hw handle, eps float32) (handle, bool) {
	if !b.compiled() {
		return handle{}, false
	}
	a := b.own(x)
	if a == nil {
		return handle{}, false
	}
	d := a.dims()
	// One position: [B, 1, ...], or heads first [B, H, 1, D].
	if len(d) < 2 || d[len(d)-1] == 0 || !decodeSized(d, 1) && !(len(d) == 4 && decodeSized(d, 2)) {
		return handle{}, false
	}
	// One closure per last axis and weighting keeps each one's list of
	// traced signatures (which MLX scans on every call) short. Its fused
	// kernel prints eps and 1/n (the mean's normalizer) as constants.
	n := d[len(d)-1]
	key := fnKey{kind: fnRMSNorm, i: [2]int32{int32(n)}, f: [2]float32{eps}}
	if !isNull(hw) {
		key.i[1] = 1
	}
	e := b.fn(key, nil, false, func() bool {
		return printsExactly(eps) && printsExactly(float32(1/float64(n)))
	})
	if e == nil {
		return handle{}, false
	}
	if isNull(hw) {
		return b.call(e, hx)
	}
	return b.call(e, hx, hw)
}

// sdpaShapes reports whether q [B, H, L, D] and k, v [B, Hkv, S, D], one
// float dtype, have Hkv 1 or H (what the broadcasting shortcuts need).
func (b *Backend) sdpaShapes(q, k, v tensor.Tensor) (*Array, bool) {
	qa, ka, va := b.own(q), b.own(k), b.own(v)
	if qa == nil || ka == nil || va == nil {
		return nil, false
	}
	qd, kd, vd := qa.dims(), ka.dims(), va.dims()
	if len(qd) != 4 || len(kd) != 4 || len(vd) != 4 || qa.mdt != ka.mdt || qa.mdt != va.mdt ||
		kd[0] != qd[0] || vd[0] != qd[0] || kd[1] != vd[1] || kd[2] != vd[2] || kd[3] != qd[3] ||
		kd[1] != 1 && kd[1] != qd[1] || !fromMLXDType(int(qa.mdt)).IsFloat() {
		return nil, false
	}
	return qa, true
}

// sdpaUnmasked is attention without a mask where shim_sdpa_unmasked applies
// (Hkv 1 or H, one dtype), or false.
func (b *Backend) sdpaUnmasked(q, k, v tensor.Tensor, hq, hk, hv handle, scale float32) (handle, bool) {
	if _, ok := b.sdpaShapes(q, k, v); !ok {
		return handle{}, false
	}
	h, m := cSDPAUnmasked(hq, hk, hv, scale, b.s)
	if m != nil {
		if !isNull(h) {
			cFreeMany([]handle{h})
		}
		return handle{}, false
	}
	return h, true
}

// sdpaMasked is attention with a bool mask where shim_sdpa_masked applies:
// sdpaUnmasked's shapes, one query position (a decode step) and a mask
// [S] or [1, S]; false otherwise.
func (b *Backend) sdpaMasked(q, k, v, mask tensor.Tensor, hq, hk, hv, hm handle, scale float32) (handle, bool) {
	qa, ka, ma := b.own(q), b.own(k), b.own(mask)
	if qa == nil || ka == nil || ma == nil || ma.mdt != mxBool {
		return handle{}, false
	}
	qd, kd, md := qa.dims(), ka.dims(), ma.dims()
	if len(qd) != 4 || qd[2] != 1 || len(md) == 0 || len(md) > 2 || md[len(md)-1] != kd[2] ||
		len(md) == 2 && md[0] != 1 {
		return handle{}, false
	}
	var lowest float64
	switch qa.mdt {
	case mxFloat32:
		lowest = -math.MaxFloat32
	case mxBFloat16:
		lowest = -3.3895313892515355e38 // 0xFF7F
	case mxFloat16:
		lowest = -65504
	default:
		return handle{}, false
	}
	if _, ok := b.sdpaShapes(q, k, v); !ok {
		return handle{}, false
	}
	minv := b.Scalar(lowest, fromMLXDType(int(qa.mdt)))
	hmin, ok := b.in("sdpa", minv)
	if !ok {
		return handle{}, false
	}
	h, m := cSDPAMasked(hq, hk, hv, scale, hm, hmin, b.s)
	if m != nil {
		if !isNull(h) {
			cFreeMany([]handle{h})
		}
		return handle{}, false
	}
	return h, true
}

// ropeFast rotates x [B, N, T, dims] (half-split, no untouched tail) with
// this step's shared tables, compiled when decode-sized; false means the
// caller takes mlx.fast.rope.
func (b *Backend) ropeFast(x tensor.Tensor, dims int, base, scale float32, offset int, freqs tensor.Tensor) (handle, bool) {
	a := b.own(x)
	if a == nil {
		return handle{}, false
	}
	d := a.dims()
	if len(d) != 4 || d[3] != dims || dims%2 != 0 || dims == 0 || offset < 0 || offset+d[2] > 1<<24 {
		return handle{}, false
	}
	var fa *Array
	if hf, _ := b.opt("rope", freqs); !isNull(hf) {
		if fa = b.own(freqs); fa == nil {
			return handle{}, false
		}
	}
	cs, sn, ok := b.ropeTables(d[2], dims, base, scale, offset, fa, int(a.mdt))
	if !ok {
		return handle{}, false
	}
	return b.ropeRotate(a, cs, sn, decodeSized(d, 2) && b.compiled())
}

// ropeRotate rotates a with the tables C and S, as a compiled composite
// when composite is set and it can be; false means the caller takes
// mlx.fast.rope.
func (b *Backend) ropeRotate(a *Array, cs, sn handle, composite bool) (handle, bool) {
	idx, ok := b.ropeSwap(a.dims())
	if !ok {
		return handle{}, false
	}
	if composite {
		if e := b.fn(fnKey{kind: fnRoPEApply}, nil, false, nil); e != nil {
			if h, ok := b.call(e, a.h, idx, cs, sn); ok {
				return h, true
			}
		}
	}
	h, m := cRoPEApply(a.h, idx, cs, sn, b.s)
	if m != nil {
		if !isNull(h) {
			cFreeMany([]handle{h})
		}
		return handle{}, false
	}
	return h, true
}

// ropeTables returns this step's tables C, S [T, dims] for the parameters,
// making them on first use (Sweep drops them). theta is computed here with
// the fallback's float32 operations, (i + offset) * scale * inv_freq, and
// MLX takes the cosines and sines.
func (b *Backend) ropeTables(t, dims int, base, scale float32, offset int, freqs *Array, dt int) (handle, handle, bool) {
	var fseq uint64
	if freqs != nil {
		fseq, base = freqs.seq, 0
	}
	for i := range b.ropeTabs {
		r := &b.ropeTabs[i]
		if r.t == t && r.dims == dims && r.offset == offset && r.dt == dt && r.base == base &&
			r.scale == scale && r.freqs == freqs && r.freqsSeq == fseq {
			return r.cs, r.sn, true
		}
	}
	if len(b.ropeTabs) >= maxRoPETables { // no full Sweep for a while
		b.dropRoPETables()
	}
	inv, ok := b.ropeInvFreqs(dims, base, freqs)
	if !ok {
		return handle{}, handle{}, false
	}
	sign, ok := b.ropeSign(dims, dt)
	if !ok {
		return handle{}, handle{}, false
	}
	theta := b.theta[:0]
	for i := range t {
		p := float32(i) + float32(offset) // arange(T) + offset
		p *= scale
		for range 2 {
			for _, f := range inv {
				theta = append(theta, p*f)
			}
		}
	}
	b.theta = theta
	cs, sn, m := cRoPETables(theta, t, dims, sign, dt, b.s)
	if m != nil {
		cFreeMany([]handle{cs, sn})
		return handle{}, handle{}, false
	}
	b.ropeTabs = append(b.ropeTabs, ropeTable{t: t, dims: dims, offset: offset, dt: dt, base: base,
		scale: scale, freqs: freqs, freqsSeq: fseq, cs: cs, sn: sn})
	return cs, sn, true
}

// ropeInvFreqs returns the inverse frequencies of a configuration, computed
// and read back from MLX once.
func (b *Backend) ropeInvFreqs(dims int, base float32, freqs *Array) ([]float32, bool) {
	r := b.ropeInvEntry(dims, base, freqs)
	if r == nil {
		return nil, false
	}
	return r.inv, true
}

// ropeInvEntry finds or makes the inverse frequencies of a configuration.
func (b *Backend) ropeInvEntry(dims int, base float32, freqs *Array) *ropeInv {
	var fseq uint64
	var fh handle
	if freqs != nil {
		fseq, fh = freqs.seq, freqs.h
	}
	for i := range b.ropeInvs {
		r := &b.ropeInvs[i]
		if r.dims == dims && r.base == base && r.freqs == freqs && r.freqsSeq == fseq {
			return r
		}
	}
	h, m := cRoPEInvFreqs(dims, freqs == nil, base, fh, b.s)
	if m != nil {
		if !isNull(h) {
			cFreeMany([]handle{h})
		}
		return nil
	}
	inv := make([]float32, dims/2)
	m = cReadF32(h, inv, b.s)
	cFreeMany([]handle{h})
	if m != nil {
		return nil
	}
	b.ropeInvs = append(b.ropeInvs, ropeInv{dims: dims, base: base, freqs: freqs, freqsSeq: fseq, inv: inv})
	return &b.ropeInvs[len(b.ropeInvs)-1]
}

func (b *Backend) dropRoPETables() {
	for i := range b.ropeTabs {
		cFreeMany([]handle{b.ropeTabs[i].cs, b.ropeTabs[i].sn})
	}
	clear(b.ropeTabs)
	b.ropeTabs = b.ropeTabs[:0]
}

// ropeSwap returns the int32 indices that exchange the two halves of the
// last axis of x [B, N, T, dims]: shaped like x for a decode step (so that
// gathering needs no broadcast), else [1, 1, 1, dims]. Kept until Close.
func (b *Backend) ropeSwap(x []int) (handle, bool) {
	dims := x[3]
	shape := [4]int{1, 1, 1, dims}
	if x[0] == 1 && x[2] == 1 && x[1] <= maxRows {
		shape[1] = x[1]
	}
	key := ropeConstKey{kind: 1, shape: shape}
	if h, ok := b.ropeConsts[key]; ok {
		return h, true
	}
	idx := make([]int32, shape[1]*dims)
	for i := range idx {
		idx[i] = int32((i%dims + dims/2) % dims)
	}
	h, m := cFromData(unsafe.Pointer(&idx[0]), []int32{1, int32(shape[1]), 1, int32(dims)}, mxInt32, mxInt32, b.s)
	return b.keepRoPEConst(key, h, m)
}

// ropeConstKey names a kept RoPE constant: swap indices of a shape, or
// signs of dims values in a dtype.
type ropeConstKey struct {
	kind  int
	dt    int
	shape [4]int
}

// ropeSign returns [-1 (dims/2 times), +1 (dims/2 times)] in dtype dt (kept
// until Close).
func (b *Backend) ropeSign(dims, dt int) (handle, bool) {
	key := ropeConstKey{kind: 2, dt: dt, shape: [4]int{dims}}
	if h, ok := b.ropeConsts[key]; ok {
		return h, true
	}
	sign := make([]float32, dims)
	for i := range sign {
		sign[i] = 1
		if i < dims/2 {
			sign[i] = -1
		}
	}
	h, m := cFromData(unsafe.Pointer(&sign[0]), []int32{int32(dims)}, mxFloat32, dt, b.s)
	if m == nil {
		m = cEval([]handle{h}, false)
	}
	return b.keepRoPEConst(key, h, m)
}

func (b *Backend) keepRoPEConst(key ropeConstKey, h handle, m cmsg) (handle, bool) {
	if m != nil {
		if !isNull(h) {
			cFreeMany([]handle{h})
		}
		return handle{}, false
	}
	if b.ropeConsts == nil {
		b.ropeConsts = map[ropeConstKey]handle{}
	}
	b.ropeConsts[key] = h
	return h, true
}

// transposed returns the cached W.T of a pinned 2-d weight w as [In, Out]
// and [1, In, Out] (null handles for other weights); shim_linear picks the
// one of x's rank. They are views: no memory of their own.
func (b *Backend) transposed(w tensor.Tensor) [2]handle {
	wa := b.own(w)
	if wa == nil || !wa.pinned {
		return [2]handle{}
	}
	if isNull(wa.wt[0]) {
		if len(wa.dims()) != 2 {
			return [2]handle{}
		}
		for i := range wa.wt {
			h, m := cTransposedWeight(wa.h, i+2, b.s)
			if m != nil {
				cFreeMany(wa.wt[:i])
				wa.wt = [2]handle{}
				return [2]handle{}
			}
			wa.wt[i] = h
		}
		// Evaluated (views: no copy), they are plain arrays to a trace
		// rather than nodes it would replay.
		if m := cEval(wa.wt[:], false); m != nil {
			cFreeMany(wa.wt[:])
			wa.wt = [2]handle{}
			return [2]handle{}
		}
	}
	return wa.wt
}

// jitLock takes the cross-process lock around possible kernel builds and
// returns its release (a no-op when the lock file cannot be used).
func jitLock() func() {
	lockOnce.Do(openJITLock)
	if lockFile == nil {
		return func() {}
	}
	if err := flock(lockFile, true); err != nil {
		return func() {}
	}
	return func() { flock(lockFile, false) }
}

var (
	lockOnce sync.Once
	lockFile *os.File
)

// openJITLock opens <tmp>/mlx/perch-jit.lock, <tmp> being the directory MLX
// builds its kernels under (std::filesystem::temp_directory_path).
func openJITLock() {
	tmp := "/tmp"
	for _, v := range []string{"TMPDIR", "TMP", "TEMP", "TEMPDIR"} {
		if d := os.Getenv(v); d != "" {
			tmp = d
			break
		}
	}
	dir := filepath.Join(tmp, "mlx")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return
	}
	f, err := os.OpenFile(filepath.Join(dir, "perch-jit.lock"), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return
	}
	lockFile = f
}

func flock(f *os.File, lock bool) error {
	how := syscall.LOCK_UN
	if lock {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}
