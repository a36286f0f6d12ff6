package gocpu

import (
	"math/rand"
	"testing"

	"perch/engine/tensor"
)

// TestReadOnlyFloatsMemo: a small 2-byte tensor (an RMSNorm weight) is
// widened once and the floats reused, and a SliceUpdate into it (the one
// op that writes a tensor in place) drops them, so the next norm reads
// the new values; large tensors are widened per call, not kept.
func TestReadOnlyFloatsMemo(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	b := New(Options{Threads: 2})
	defer b.Close()
	raw, vals := halfBytes(randFloats(r, 64, 1), false)
	w := b.FromBytes(raw, tensor.BFloat16, []int{64}).(*T)
	first, again := readOnlyFloats(w), readOnlyFloats(w)
	if &first[0] != &again[0] || !equalBits(first, vals) {
		t.Fatal("the widened floats were not kept, or are wrong")
	}
	x := b.FromFloat32(randFloats(r, 2*64, 1), []int{2, 64}, tensor.Float32)
	before := must(b.Float32s(b.RMSNorm(x, w, 1e-6)))
	raw2, vals2 := halfBytes(randFloats(r, 16, 1), false)
	w2 := b.SliceUpdate(w, b.FromBytes(raw2, tensor.BFloat16, []int{16}), 0, 8).(*T)
	want := append(append(append([]float32{}, vals[:8]...), vals2...), vals[24:]...)
	if got := readOnlyFloats(w2); !equalBits(got, want) {
		t.Fatalf("after SliceUpdate: %v, want %v", got[:24], want[:24])
	}
	if after := must(b.Float32s(b.RMSNorm(x, w2, 1e-6))); equalBits(after, before) {
		t.Fatal("RMSNorm still reads the weight from before SliceUpdate")
	}
	big := b.FromBytes(make([]byte, 2*(memoMax+1)), tensor.BFloat16, []int{memoMax + 1}).(*T)
	if a, c := readOnlyFloats(big), readOnlyFloats(big); &a[0] == &c[0] {
		t.Fatal("a large tensor's floats were kept")
	}
}

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
