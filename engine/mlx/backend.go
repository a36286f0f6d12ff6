// Package mlx implements tensor.Backend on Apple's MLX through mlx-c. It is
// the only package that imports "C" (capi.go and capi_train.go).
//
// Data flows one way: the model's ops come in through tensor.Backend, go
// out as mlx-c calls on the arrays in the arena, and values come back only
// when read (Eval, readback); errors come back as Go errors.
//
//   - Loading: libmlxc is opened with dlopen at run time (see Available for the
//     search order), so binaries build and run without it; New reports a clear
//     error when it is absent.
//   - Errors: mlx-c's process-exiting error handler is replaced; a failed call
//     becomes the backend's sticky error ("mlx: <op>: <MLX's message>"), later
//     ops return an empty tensor, and Err/Eval/readback report it.
//   - Lifetime: every array an op returns lives in the backend's arena and is
//     freed by the next Sweep unless it is pinned or passed in keep; Close frees
//     everything. No finalizers.
//   - Threading: a Backend is not safe for concurrent use. Create it, use it and
//     Close it on one goroutine locked to its OS thread (runtime.LockOSThread):
//     MLX streams are per thread, and a failed call's message is kept per thread.
//   - Device: the default GPU stream when a GPU exists, else the CPU stream.
package mlx

import (
	"errors"
	"fmt"
	"math"

	"perch/engine/tensor"
)

// Backend is an MLX tensor.Backend on one stream (the GPU when one exists).
type Backend struct {
	s      stream
	gpu    bool
	err    error
	closed bool

	live   []*Array // unpinned: freed by the next Sweep unless kept
	pinned []*Array
	epoch  uint64
	seq    uint64  // arrays made so far
	slab   []Array // Arrays are carved from chunks to spare the allocator

	// consts[dt] holds {0.5, 3, 0.044715, sqrt(2/pi), 1, 0} in dtype dt,
	// made on first use (GeluTanh, Softplus) and freed by Close.
	consts [6][6]handle

	scratchA [maxDims]int32
	scratchB [maxDims]int32
	args     []handle // handle lists for Eval and Concat
	frees    []handle // handles Sweep frees
	empty    *Array
}

var _ tensor.Backend = (*Backend)(nil)

var errClosed = errors.New("mlx: backend is closed")

// New loads libmlxc if needed and returns a backend on the default GPU
// stream when a GPU exists, else on the CPU stream.
func New() (*Backend, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	gpu, m := cGPUAvailable()
	if m != nil {
		return nil, errors.New("mlx: device: " + goString(m))
	}
	s, m := cDefaultStream(gpu)
	if m != nil {
		return nil, errors.New("mlx: stream: " + goString(m))
	}
	b := &Backend{s: s, gpu: gpu}
	b.empty = &Array{b: b, empty: true, ndim: -1, slot: -1}
	return b, nil
}

// Name identifies the backend.
func (b *Backend) Name() string { return "mlx" }

// Lazy implements tensor.Backend: MLX evaluates graphs when read.
func (b *Backend) Lazy() bool { return true }

// Device is "gpu" or "cpu".
func (b *Backend) Device() string {
	if b.gpu {
		return "gpu"
	}
	return "cpu"
}

// Err is the first error since the last ClearErr.
func (b *Backend) Err() error { return b.err }

// ClearErr forgets the recorded error (not after Close).
func (b *Backend) ClearErr() {
	if !b.closed {
		b.err = nil
	}
}

func (b *Backend) fail(op, format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf("mlx: %s: %s", op, fmt.Sprintf(format, args...))
	}
}

func (b *Backend) failC(op string, m cmsg) {
	if b.err == nil {
		b.err = fmt.Errorf("mlx: %s: %s", op, goString(m))
	}
}

// in returns t's handle, or records why it cannot be used.
func (b *Backend) in(op string, t tensor.Tensor) (handle, bool) {
	a, ok := t.(*Array)
	switch {
	case !ok || a == nil:
		b.fail(op, "operand is not an MLX tensor (%T)", t)
	case a.b != b:
		b.fail(op, "operand belongs to another backend")
	case a.empty:
		b.fail(op, "operand is the empty result of a failed op")
	case isNull(a.h):
		b.fail(op, "operand was freed by Sweep (pin it or pass it to keep)")
	default:
		return a.h, true
	}
	return handle{}, false
}

// opt is in for optional operands: nil is a null handle.
func (b *Backend) opt(op string, t tensor.Tensor) (handle, bool) {
	if t == nil {
		return handle{}, true
	}
	if a, ok := t.(*Array); ok && a == nil {
		return handle{}, true
	}
	return b.in(op, t)
}

// arr returns t's Array with its metadata, or records why it cannot be used.
func (b *Backend) arr(op string, t tensor.Tensor) (*Array, bool) {
	if _, ok := b.in(op, t); !ok {
		return nil, false
	}
	a := t.(*Array)
	a.dims()
	return a, true
}

// out tracks an op's result, or records its error and returns the empty tensor.
func (b *Backend) out(op string, h handle, m cmsg) tensor.Tensor {
	if m != nil {
		b.failC(op, m)
		if !isNull(h) {
			cFreeMany([]handle{h})
		}
		return b.empty
	}
	return b.track(h)
}

func (b *Backend) track(h handle) *Array {
	if len(b.slab) == cap(b.slab) {
		b.slab = make([]Array, 0, 256)
	}
	b.slab = b.slab[:len(b.slab)+1]
	a := &b.slab[len(b.slab)-1]
	b.seq++
	a.h, a.b, a.ndim, a.slot, a.seq = h, b, -1, int32(len(b.live)), b.seq
	b.live = append(b.live, a)
	return a
}

// own returns t when it is a live Array of b.
func (b *Backend) own(t tensor.Tensor) *Array {
	a, ok := t.(*Array)
	if !ok || a == nil || a.b != b || a.empty || isNull(a.h) {
		return nil
	}
	return a
}

// Pin moves ts into the long-lived set that Sweep leaves alone.
func (b *Backend) Pin(ts ...tensor.Tensor) {
	for _, t := range ts {
		a := b.own(t)
		if a == nil {
			if t != nil {
				b.in("pin", t)
			}
			continue
		}
		if a.pinned {
			continue
		}
		b.live = removeAt(b.live, a.slot)
		a.pinned, a.slot = true, int32(len(b.pinned))
		b.pinned = append(b.pinned, a)
	}
}

// Unpin returns ts to the arena: the next Sweep frees them unless kept.
func (b *Backend) Unpin(ts ...tensor.Tensor) {
	for _, t := range ts {
		a := b.own(t)
		if a == nil || !a.pinned {
			continue
		}
		b.pinned = removeAt(b.pinned, a.slot)
		a.pinned, a.slot = false, int32(len(b.live))
		b.live = append(b.live, a)
	}
}

// removeAt swap-removes s[i] and fixes the moved element's slot.
func removeAt(s []*Array, i int32) []*Array {
	last := len(s) - 1
	if int(i) != last {
		s[i] = s[last]
		s[i].slot = i
	}
	s[last] = nil
	return s[:last]
}

// Sweep frees every unpinned array not in keep. Pending graphs keep what
// they need (MLX reference-counts), so sweeping before Eval is safe.
func (b *Backend) Sweep(keep ...tensor.Tensor) { b.sweep(0, keep) }

// Mark is the point SweepSince frees back to.
func (b *Backend) Mark() uint64 { return b.seq + 1 }

// SweepSince frees the unpinned arrays made since mark, except keep: a
// layer's intermediates then live only as long as the graph needs them.
func (b *Backend) SweepSince(mark uint64, keep ...tensor.Tensor) { b.sweep(mark, keep) }

func (b *Backend) sweep(since uint64, keep []tensor.Tensor) {
	if b.closed {
		return
	}
	b.epoch++
	for _, t := range keep {
		if a := b.own(t); a != nil {
			a.mark = b.epoch
		}
	}
	n := 0
	frees := b.frees[:0]
	for _, a := range b.live {
		if a.mark == b.epoch || a.seq < since {
			b.live[n], a.slot = a, int32(n)
			n++
			continue
		}
		frees = append(frees, a.h)
		a.h = handle{}
	}
	clear(b.live[n:])
	b.live = b.live[:n]
	if m := cFreeMany(frees); m != nil {
		b.failC("sweep", m)
	}
	clear(frees)
	b.frees = frees[:0]
}

// Live is the number of arrays the arena holds (unpinned, pinned).
func (b *Backend) Live() (unpinned, pinned int) { return len(b.live), len(b.pinned) }

// Close frees every array; the backend is unusable afterwards.
func (b *Backend) Close() error {
	if b.closed {
		return nil
	}
	hs := make([]handle, 0, len(b.live)+len(b.pinned)+len(b.consts)*len(b.consts[0]))
	for _, set := range [][]*Array{b.live, b.pinned} {
		for _, a := range set {
			hs = append(hs, a.h)
			a.h = handle{}
		}
	}
	for i := range b.consts {
		for j, h := range b.consts[i] {
			if !isNull(h) {
				hs = append(hs, h)
				b.consts[i][j] = handle{}
			}
		}
	}
	b.live, b.pinned = nil, nil
	var err error
	if m := cFreeMany(hs); m != nil {
		err = errors.New("mlx: close: " + goString(m))
	}
	if m := cStreamFree(b.s); m != nil && err == nil {
		err = errors.New("mlx: close stream: " + goString(m))
	}
	b.closed = true
	b.err = errClosed
	return err
}

// ActiveMemory is the bytes MLX holds in live buffers, after the stream's
// pending work has finished (so the figure is settled).
func (b *Backend) ActiveMemory() int64 {
	if !b.closed {
		if m := cSynchronize(b.s); m != nil {
			b.failC("synchronize", m)
		}
	}
	return b.memory("active memory", memActive)
}

// PeakMemory is the high-water mark of active memory since the last reset.
func (b *Backend) PeakMemory() int64 { return b.memory("peak memory", memPeak) }

// CacheMemory is the bytes MLX keeps in its buffer cache for reuse.
func (b *Backend) CacheMemory() int64 { return b.memory("cache memory", memCache) }

func (b *Backend) memory(op string, which int) int64 {
	n, m := cMemory(which)
	if m != nil {
		b.failC(op, m)
		return 0
	}
	return n
}

// ResetPeakMemory restarts PeakMemory's high-water mark.
func (b *Backend) ResetPeakMemory() {
	if m := cResetPeak(); m != nil {
		b.failC("reset peak memory", m)
	}
}

// ClearCache returns MLX's cached buffers to the system.
func (b *Backend) ClearCache() {
	if m := cClearCache(); m != nil {
		b.failC("clear cache", m)
	}
}

// constants returns the cached scalars of Backend.consts in mlx dtype dt.
func (b *Backend) constants(op string, dt int) (*[6]handle, bool) {
	td := fromMLXDType(dt)
	if td == UnknownDType || !td.IsFloat() {
		b.fail(op, "needs a float tensor, got %v", td)
		return nil, false
	}
	c := &b.consts[td]
	if isNull(c[0]) {
		vals := [6]float64{0.5, 3, 0.044715, math.Sqrt(2 / math.Pi), 1, 0}
		for i, v := range vals {
			h, m := cScalar(v, dt, b.s)
			if m != nil {
				b.failC(op, m)
				return nil, false
			}
			c[i] = h
		}
		// Evaluated once, they are plain constants (not cast nodes).
		if m := cEval(append([]handle(nil), c[:]...), false); m != nil {
			b.failC(op, m)
			return nil, false
		}
	}
	return c, true
}
