package gocpu

import (
	"math/rand"
	"sync/atomic"
	"testing"
	"time"

	"perch/engine/tensor"
)

// TestEachCoversOnce: each and run hand every index to exactly one call of
// fn, and no worker index is in use by two goroutines at once, for pools
// of 1 to 4 and chunks that do and do not divide the total.
func TestEachCoversOnce(t *testing.T) {
	for n := 1; n <= 4; n++ {
		p := newPool(n)
		for _, total := range []int{0, 1, 7, 64, 1000, 4099} {
			for _, chunk := range []int{0, 1, 3, 64, 5000} {
				seen := make([]atomic.Int32, total)
				inUse := make([]atomic.Int32, n)
				var bad atomic.Int32
				p.each(total, chunk, func(worker, lo, hi int) {
					if worker < 0 || worker >= n || inUse[worker].Add(1) != 1 {
						bad.Add(1)
					}
					for i := lo; i < hi; i++ {
						seen[i].Add(1)
					}
					inUse[worker].Add(-1)
				})
				if bad.Load() != 0 {
					t.Fatalf("n=%d total=%d chunk=%d: a worker index out of range or shared", n, total, chunk)
				}
				for i := range seen {
					if seen[i].Load() != 1 {
						t.Fatalf("n=%d total=%d chunk=%d: index %d done %d times", n, total, chunk, i, seen[i].Load())
					}
				}
				ran := make([]atomic.Int32, total)
				p.run(total, chunk, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						ran[i].Add(1)
					}
				})
				for i := range ran {
					if ran[i].Load() != 1 {
						t.Fatalf("run n=%d total=%d grain=%d: index %d done %d times", n, total, chunk, i, ran[i].Load())
					}
				}
			}
		}
		p.close()
	}
}

// TestEachLateWorker: with its only worker held by other work, each and
// run still finish (the caller takes every chunk) instead of waiting for
// it, also once more calls than the hand-off queue holds have been made;
// the worker, let go, runs the stale hand-offs as no-ops.
func TestEachLateWorker(t *testing.T) {
	p := newPool(2)
	defer p.close()
	release := make(chan struct{})
	held := make(chan struct{})
	p.work <- func() { close(held); <-release }
	<-held
	var calls atomic.Int32
	finished := make(chan struct{})
	go func() {
		for i := 0; i < 3*p.n+1; i++ {
			p.each(100, 10, func(worker, lo, hi int) { calls.Add(int32(hi - lo)) })
			p.run(100, 10, func(lo, hi int) { calls.Add(int32(hi - lo)) })
		}
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(time.Minute):
		t.Fatal("each waited for a worker held elsewhere")
	}
	close(release)
	if got, want := calls.Load(), int32(200*(3*p.n+1)); got != want {
		t.Fatalf("%d items done, want %d", got, want)
	}
	// the worker, free again, drains the stale hand-offs and serves anew
	var after atomic.Int32
	p.each(1000, 1, func(worker, lo, hi int) { after.Add(int32(hi - lo)) })
	if after.Load() != 1000 {
		t.Fatalf("after release: %d items, want 1000", after.Load())
	}
}

// TestEachStallGoesSolo: a worker that stops in the middle of a chunk (as
// one the OS preempts for another process does) makes the caller wait on
// it; the next calls then run on the caller alone until the pool's solo
// time is over, and after it the workers take part again.
func TestEachStallGoesSolo(t *testing.T) {
	p := newPool(2)
	defer p.close()
	p.soloMin = 300 * time.Millisecond
	entered := make(chan struct{})
	var once atomic.Bool
	p.each(8, 1, func(worker, lo, hi int) {
		switch {
		case worker != 0 && once.CompareAndSwap(false, true):
			close(entered)
			time.Sleep(20 * time.Millisecond) // preempted mid-chunk
		case worker == 0 && lo == 0:
			<-entered // the worker holds a chunk before the caller runs out
		}
	})
	if p.soloUntil.Load() <= time.Now().UnixNano() {
		t.Fatal("a 20 ms wait on a worker did not make the caller go solo")
	}
	workersSeen := func() int32 {
		var others atomic.Int32
		p.each(64, 1, func(worker, lo, hi int) {
			if worker != 0 {
				others.Add(1)
			}
			time.Sleep(100 * time.Microsecond)
		})
		return others.Load()
	}
	if n := workersSeen(); n != 0 {
		t.Fatalf("within the solo time a worker took %d chunks", n)
	}
	time.Sleep(time.Until(time.Unix(0, p.soloUntil.Load())) + time.Millisecond)
	for try := 0; try < 50; try++ { // a worker late by chance misses a call
		if workersSeen() > 0 {
			return
		}
	}
	t.Fatal("after the solo time no worker took a chunk in 50 calls")
}

// TestStalled: a wait past the caller's polling and its own work is a
// stall; the tail of a chunk on a quiet machine is not.
func TestStalled(t *testing.T) {
	for _, c := range []struct {
		own, wait time.Duration
		want      bool
	}{
		{time.Millisecond, 50 * time.Microsecond, false},
		{time.Millisecond, 800 * time.Microsecond, false},
		{100 * time.Microsecond, 150 * time.Microsecond, false},
		{100 * time.Microsecond, 400 * time.Microsecond, false}, // a long chunk's tail
		{100 * time.Microsecond, 3 * time.Millisecond, true},
		{5 * time.Millisecond, 6 * time.Millisecond, true},
	} {
		if got := stalled(c.own, c.wait); got != c.want {
			t.Errorf("stalled(own %v, wait %v) = %v, want %v", c.own, c.wait, got, c.want)
		}
	}
}

// TestGoSoloBacksOff: a stall soon after the last solo time ends doubles
// the next one (up to soloMax); one that comes alone starts again from
// soloMin.
func TestGoSoloBacksOff(t *testing.T) {
	p := newPool(2)
	defer p.close()
	now := time.Now()
	want := soloMin
	for i := 0; i < 10; i++ {
		p.goSolo(now)
		if p.soloFor != want {
			t.Fatalf("stall %d in a row: solo for %v, want %v", i+1, p.soloFor, want)
		}
		now = time.Unix(0, p.soloUntil.Load()).Add(time.Millisecond)
		want = min(2*want, soloMax)
	}
	p.goSolo(now.Add(soloMax + soloNear))
	if p.soloFor != soloMin {
		t.Fatalf("a stall long after the last: solo for %v, want %v", p.soloFor, soloMin)
	}
}

// TestRunAlignedBits: an elementwise op with a vector kernel (tanh, exp,
// GELU) gives the same bits with 1, 2 and 3 workers on a length that
// splits unevenly: run's ranges start on multiples of 64, so the kernels'
// scalar tails fall only at the end.
func TestRunAlignedBits(t *testing.T) {
	x := randFloats(rand.New(rand.NewSource(8)), 40001, 6)
	var want [3][]float32
	for i, threads := range []int{1, 2, 3} {
		b := New(Options{Threads: threads})
		xt := b.FromFloat32(x, []int{40001}, tensor.Float32)
		for j, y := range []tensor.Tensor{b.Tanh(xt), b.Exp(xt), b.GeluTanh(xt)} {
			got := must(b.Float32s(y))
			if i == 0 {
				want[j] = got
			} else if !equalBits(got, want[j]) {
				t.Fatalf("%d workers, op %d: bits differ from one worker's", threads, j)
			}
		}
		b.Close()
	}
}
