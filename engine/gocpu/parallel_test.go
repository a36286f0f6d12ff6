package gocpu

import (
	"sync/atomic"
	"testing"
	"time"
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
