package gocpu

import (
	"math/rand"
	"testing"

	"perch/engine/tensor"
)

// TestRoPEMemo: one-position RoPE calls that reuse kept tables (q then k
// at one position, two frequency bases, explicit frequencies, positions
// that move on, more calls than the memo holds) give the bits a fresh
// backend computes, and a call with another key never gets a kept table.
func TestRoPEMemo(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	b := New(Options{Threads: 2})
	defer b.Close()
	freqs := b.FromFloat32(randFloats(r, 64, 1), []int{64}, tensor.Float32)
	type call struct {
		heads, L, offset int
		base             float32
		freqs            tensor.Tensor
	}
	var calls []call
	for _, off := range []int{7, 7, 8, 300} {
		calls = append(calls, call{8, 1, off, 1e4, nil}, call{1, 1, off, 1e4, nil}, call{8, 1, off, 1e6, nil}, call{1, 1, off, 1e6, freqs}, call{2, 3, off, 1e4, nil})
	}
	calls = append(calls, call{8, 1, 7, 1e4, nil}) // long evicted: computed again
	for i, c := range calls {
		x := randFloats(r, c.heads*c.L*128, 1)
		got := must(b.Float32s(b.RoPE(b.FromFloat32(x, []int{1, c.heads, c.L, 128}, tensor.Float32), 128, false, c.base, 1, c.offset, c.freqs)))
		fresh := New(Options{Threads: 2})
		var ff tensor.Tensor
		if c.freqs != nil {
			ff = fresh.FromFloat32(must(b.Float32s(c.freqs)), []int{64}, tensor.Float32)
		}
		want := must(fresh.Float32s(fresh.RoPE(fresh.FromFloat32(x, []int{1, c.heads, c.L, 128}, tensor.Float32), 128, false, c.base, 1, c.offset, ff)))
		fresh.Close()
		if !equalBits(got, want) {
			t.Fatalf("call %d %+v: the kept tables give other bits", i, c)
		}
	}
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
}
