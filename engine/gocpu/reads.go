package gocpu

import (
	"sync/atomic"
	"time"
)

// decodeReads counts the bytes that ops with one query row (decode steps)
// read from weights and caches: Linear and GatherLinear weights with their
// scales and biases, Embedding rows, SDPA keys and values. Benchmarks read
// it (DecodeReads) to report bytes per decoded token.
var decodeReads atomic.Int64

// DecodeReads is the running total of bytes read by one-row ops, over
// every Go backend of the process.
func DecodeReads() int64 { return decodeReads.Load() }

// rowBytes is the bytes one weight row occupies: packed words, or dense
// values, plus its scales and biases.
func (w *weight) rowBytes() int64 {
	switch {
	case w.dense != nil:
		return int64(w.in) * 4
	case w.denseH != nil:
		return int64(w.in) * 2
	}
	affine := 8
	if w.scalesH != nil {
		affine = 4
	}
	return int64(w.words*4 + w.groups*affine)
}

// ReadBandwidth measures the read bandwidth (bytes/s) of this machine with
// threads workers summing a buffer of size bytes (best of reps passes),
// the probe decode speed is held against.
func ReadBandwidth(size int, threads, reps int) float64 {
	p := newPool(max(threads, 1))
	defer p.close()
	buf := make([]uint64, size/8)
	for i := range buf {
		buf[i] = uint64(i)
	}
	sums := make([]uint64, p.n*8) // a cache line per worker
	best := 0.0
	for r := 0; r < reps; r++ {
		t0 := time.Now()
		p.each(len(buf), 1<<16, func(worker, lo, hi int) { sums[8*worker] += kern.sum64(buf[lo:hi]) })
		best = max(best, float64(len(buf)*8)/time.Since(t0).Seconds())
	}
	return best
}

func sum64Go(a []uint64) uint64 {
	var s0, s1, s2, s3 uint64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i]
		s1 += a[i+1]
		s2 += a[i+2]
		s3 += a[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i]
	}
	return s0 + s1 + s2 + s3
}
