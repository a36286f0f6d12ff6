package gocpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// pool runs range-split work on a fixed number of goroutines: the caller
// and n-1 workers.
type pool struct {
	n    int
	work chan func()
	once sync.Once
	// soloUntil (unix ns): until then each runs on the caller alone (see
	// stalled); soloFor, how long the last stall bought (under soloMu).
	soloUntil atomic.Int64
	soloMu    sync.Mutex
	soloFor   time.Duration
	soloMin   time.Duration
}

// How long the caller works alone after a stall: soloMin after one that
// comes alone, twice the last time after one that comes within soloNear
// (or the last time, if longer) of the last solo time's end: another
// process keeps a core busy. Up to soloMax.
const (
	soloMin  = 20 * time.Millisecond
	soloNear = 100 * time.Millisecond
	soloMax  = 640 * time.Millisecond
)

// spinFor is how long an idle worker keeps polling for work before it
// sleeps, and how long a caller polls for its workers before it sleeps: a
// decode step hands out work every few microseconds, and waking a
// sleeping thread costs tens of them.
const spinFor = 200 * time.Microsecond

func newPool(n int) *pool {
	p := &pool{n: n, work: make(chan func(), n), soloMin: soloMin}
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

// next polls for work for up to spinFor, then waits for it. It polls
// without yielding but for a Gosched every 256 rounds, which lets the
// process's other goroutines run: a yield per round costs a scheduler
// pass, which made a worker microseconds late to most ops.
func (p *pool) next() (func(), bool) {
	deadline := time.Now().Add(spinFor)
	for i := 0; ; i++ {
		select {
		case f, ok := <-p.work:
			return f, ok
		default:
		}
		if i%256 == 255 {
			if time.Now().After(deadline) {
				f, ok := <-p.work
				return f, ok
			}
			runtime.Gosched()
		}
	}
}

// run calls fn over [0, total) split into about p.n contiguous ranges; grain
// is the smallest range worth a goroutine. A worker that is late (asleep,
// or its core taken by other work) leaves its range to the caller. Ranges
// start on multiples of 64 when grain is at least that, so that a vector
// kernel's scalar tail (tanh, exp) falls only at the end of the whole, as
// in one range: the bits do not depend on the number of workers.
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
	chunk := (total + parts - 1) / parts
	if grain >= 64 {
		chunk = (chunk + 63) &^ 63
	}
	p.each(total, chunk, func(_, lo, hi int) { fn(lo, hi) })
}

// each runs fn over [0, total) in chunks of chunk items that the caller
// and the workers claim in turn, so a core slowed by other load simply
// takes fewer; worker is in [0, p.n) and no two concurrent calls share
// one. The caller waits only for chunks a worker has claimed: a worker
// that picks its call up after every chunk is taken does nothing, so a
// late worker costs the caller no wait. Hand-offs never block: a worker
// whose queue is full is left out.
func (p *pool) each(total, chunk int, fn func(worker, lo, hi int)) {
	chunk = max(chunk, 1)
	chunks := (total + chunk - 1) / chunk
	workers := min(p.n, chunks)
	if workers > 1 && p.soloUntil.Load() > time.Now().UnixNano() {
		workers = 1
	}
	if workers <= 1 {
		if total > 0 {
			fn(0, 0, total)
		}
		return
	}
	j := &eachCall{done: make(chan struct{}, 1)}
	// worker i owns a contiguous run of chunks and takes them from its
	// front; one out of its own takes from the back of the others'.
	j.spans = make([]atomic.Uint64, workers)
	per := (chunks + workers - 1) / workers
	for i := range j.spans {
		lo, hi := min(i*per, chunks), min((i+1)*per, chunks)
		j.spans[i].Store(uint64(lo)<<32 | uint64(hi))
	}
	claim := func(i int, front bool) int {
		for {
			v := j.spans[i].Load()
			lo, hi := int(v>>32), int(uint32(v))
			if lo >= hi {
				return -1
			}
			nv, c := uint64(lo+1)<<32|uint64(hi), lo
			if !front {
				nv, c = uint64(lo)<<32|uint64(hi-1), hi-1
			}
			if j.spans[i].CompareAndSwap(v, nv) {
				return c
			}
		}
	}
	body := func(worker int) {
		for k := 0; k < workers; k++ {
			i := (worker + k) % workers
			for {
				c := claim(i, k == 0)
				if c < 0 {
					break
				}
				fn(worker, c*chunk, min((c+1)*chunk, total))
			}
		}
	}
	for i := 1; i < workers; i++ {
		select {
		case p.work <- func() {
			j.active.Add(1)
			body(i)
			if j.active.Add(-1) == 0 && j.waiting.CompareAndSwap(true, false) {
				j.done <- struct{}{}
			}
		}:
		default:
		}
	}
	t0 := time.Now()
	body(0)
	t1 := time.Now()
	j.wait()
	if t2 := time.Now(); stalled(t1.Sub(t0), t2.Sub(t1)) {
		p.goSolo(t2)
	}
}

// goSolo has each run on its caller alone for a while from now (see
// soloMin).
func (p *pool) goSolo(now time.Time) {
	p.soloMu.Lock()
	defer p.soloMu.Unlock()
	if now.Sub(time.Unix(0, p.soloUntil.Load())) < max(p.soloFor, soloNear) {
		p.soloFor = min(2*p.soloFor, soloMax)
	} else {
		p.soloFor = p.soloMin
	}
	p.soloUntil.Store(now.Add(p.soloFor).UnixNano())
}

// stalled reports whether a call's wait for its workers, after the caller
// had done all it could (own work), says a worker lost its core in the
// middle of a chunk: longer than the caller's own work and than
// stallWait. On a quiet machine the wait is at most the rest of one
// chunk; where another process takes a core, the OS preempts a worker
// for milliseconds while the caller waits on it, and the workers also
// take time from the caller's core. Then the caller does better
// alone for a while (each runs on it only, see goSolo; idle workers sleep
// after spinFor and leave their cores to the other process).
func stalled(own, wait time.Duration) bool {
	return wait > stallWait && wait > own
}

// stallWait is the shortest wait that counts as a stall: a worker's chunk
// that outlasts the caller's polling by a little is the tail of a long
// chunk (prefill's), and an OS's preemption lasts milliseconds.
const stallWait = time.Millisecond

// eachCall is one call of each: the next chunk to claim, the workers
// inside it, and the caller's wake-up once it sleeps.
type eachCall struct {
	spans   []atomic.Uint64 // per worker: its next chunk << 32 | its end
	active  atomic.Int32
	waiting atomic.Bool
	done    chan struct{}
}

// wait returns once no worker is inside the call (every chunk is claimed
// by now, so none can enter and claim one): it polls for up to spinFor
// without yielding (the caller is often the engine's goroutine, locked to
// its thread, which a yield or park hands off at a cost of tens of
// microseconds), then sleeps until the last worker out wakes it.
func (j *eachCall) wait() {
	deadline := time.Now().Add(spinFor)
	for i := 0; j.active.Load() > 0; i++ {
		if i%64 == 63 && time.Now().After(deadline) {
			j.waiting.Store(true)
			if j.active.Load() == 0 && j.waiting.CompareAndSwap(true, false) {
				return
			}
			<-j.done
			return
		}
	}
}

func (p *pool) close() { p.once.Do(func() { close(p.work) }) }
