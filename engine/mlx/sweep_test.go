package mlx

import (
	"testing"

	"perch/engine/tensor"
)

// TestSweepSince frees only what was made after the mark (and not kept);
// a kept result still evaluates although its inputs' handles are gone.
func TestSweepSince(t *testing.T) {
	b := newBackend(t)
	before := b.Scalar(2, tensor.Float32)
	mark := b.Mark()
	x := b.FromFloat32([]float32{1, 2, 3}, []int{3}, tensor.Float32)
	y := b.Mul(x, before)
	z := b.Add(y, x)
	u0, _ := b.Live()
	b.SweepSince(mark, z)
	u1, _ := b.Live()
	if u1 != u0-2 {
		t.Fatalf("live arrays %d -> %d, want two freed (x, y)", u0, u1)
	}
	got, err := b.Float32s(z)
	if err != nil || got[0] != 3 || got[2] != 9 {
		t.Fatalf("z = %v, %v", got, err)
	}
	if v, err := b.Float32s(before); err != nil || v[0] != 2 {
		t.Fatalf("an array made before the mark was freed: %v %v", v, err)
	}
}
