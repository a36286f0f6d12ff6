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
