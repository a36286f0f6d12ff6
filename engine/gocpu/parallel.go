package gocpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// pool runs range-split work on a fixed number of goroutines.
type pool struct {
	n    int
	work chan func()
	once sync.Once
}

// spinFor is how long an idle worker keeps polling for work (yielding the
// CPU each round) before it sleeps: a decode step hands out work every few
// microseconds, and waking a sleeping thread costs tens of them, so without
// it the second core joins each op late.
const spinFor = 200 * time.Microsecond

func newPool(n int) *pool {
	p := &pool{n: n, work: make(chan func(), n)}
	for i := 0; i < n-1; i++ {
		go p.worker()
	}
	return p
}

func (p *pool) worker() {
	for {
		f, ok := p.next()
		if !ok {
			return
		}
		f()
	}
}

// next polls for work for up to spinFor, then waits for it.
func (p *pool) next() (func(), bool) {
	deadline := time.Now().Add(spinFor)
	for i := 0; ; i++ {
		select {
		case f, ok := <-p.work:
			return f, ok
		default:
		}
		if i%32 == 31 && time.Now().After(deadline) {
			f, ok := <-p.work
			return f, ok
		}
		runtime.Gosched()
	}
}

// run calls fn over [0, total) split into about p.n contiguous ranges; grain
// is the smallest range worth a goroutine.
func (p *pool) run(total, grain int, fn func(lo, hi int)) {
	parts := p.n
	if grain < 1 {
		grain = 1
	}
	if max := (total + grain - 1) / grain; parts > max {
		parts = max
	}
	if parts <= 1 {
		fn(0, total)
		return
	}
	var wg sync.WaitGroup
	var left atomic.Int32
	step := (total + parts - 1) / parts
	for lo := step; lo < total; lo += step {
		hi := min(lo+step, total)
		wg.Add(1)
		left.Add(1)
		l := lo
		p.work <- func() { fn(l, hi); left.Add(-1); wg.Done() }
	}
	fn(0, min(step, total))
	awaitSpinning(&left)
	wg.Wait()
}

// awaitSpinning polls until left is zero, for up to spinFor, without
// yielding: the caller is often the engine's goroutine, and parking it
// (or a Gosched on a thread it is locked to) hands its thread off and
// costs tens of microseconds to wake, on every op of a decode step. The
// WaitGroup after it sleeps for whatever is still running then.
func awaitSpinning(left *atomic.Int32) {
	deadline := time.Now().Add(spinFor)
	for i := 0; left.Load() > 0; i++ {
		if i%64 == 63 && time.Now().After(deadline) {
			return
		}
	}
}

func (p *pool) close() { p.once.Do(func() { close(p.work) }) }
