package gocpu

import "sync"

// pool runs range-split work on a fixed number of goroutines.
type pool struct {
	n    int
	work chan func()
	once sync.Once
}

func newPool(n int) *pool {
	p := &pool{n: n, work: make(chan func(), n)}
	for i := 0; i < n-1; i++ {
		go func() {
			for f := range p.work {
				f()
			}
		}()
	}
	return p
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
	step := (total + parts - 1) / parts
	for lo := step; lo < total; lo += step {
		hi := min(lo+step, total)
		wg.Add(1)
		l := lo
		p.work <- func() { fn(l, hi); wg.Done() }
	}
	fn(0, min(step, total))
	wg.Wait()
}

func (p *pool) close() { p.once.Do(func() { close(p.work) }) }
