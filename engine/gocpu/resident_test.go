package gocpu

import (
	"encoding/binary"
	"math"
	"math/rand"
	"runtime"
	"testing"
	"unsafe"

	"perch/engine/tensor"
)

// loadedLinear is a 4-bit Linear made as a checkpoint's is: packed words
// and bfloat16 scales and biases from little-endian bytes (FromBytes).
func loadedLinear(b *Backend, r *rand.Rand, out, in, gs int) *tensor.Linear {
	raw := make([]byte, out*in/2)
	r.Read(raw)
	half := func(scale float32) []byte {
		h := make([]byte, 2*out*in/gs)
		for i := 0; i < len(h); i += 2 {
			binary.LittleEndian.PutUint16(h[i:], bf16Bits(scale*(0.5+r.Float32())))
		}
		return h
	}
	return &tensor.Linear{In: in, Out: out, Bits: 4, GroupSize: gs,
		W:      b.FromBytes(raw, tensor.Uint32, []int{out, in / 8}),
		Scales: b.FromBytes(half(0.02), tensor.BFloat16, []int{out, in / gs}),
		Biases: b.FromBytes(half(-0.16), tensor.BFloat16, []int{out, in / gs})}
}

// TestResidentWeights: a checkpoint's quantized weights read from their
// copies in 2 MB pages give the bits the mapped bytes give, for a decode
// matvec (exact and int8), a prefill GEMM and the transposed product;
// Embedding's rows are the same before the copy (which it does not make)
// and after (read from it); the copy is made once per weight, only for
// checkpoint data, in regions on 2 MB boundaries, and Close gives them
// back. Where the OS has no huge
// pages (not Linux, or THP "never") no copy is made and the test says so.
func TestResidentWeights(t *testing.T) {
	r := rand.New(rand.NewSource(41))
	for _, intDecode := range []bool{false, true} {
		res, mapped := New(Options{Threads: 2, IntDecode: intDecode, IntPrefill: true}), New(Options{Threads: 2, IntDecode: intDecode, IntPrefill: true, MappedWeights: true})
		l := loadedLinear(res, r, 96, 256, 64)
		heap := randLinear(r, 0, 32, 256, 4, 64, false) // built in memory: never copied
		ids := []int32{3, 95, 0, 3}
		embed := func(b *Backend) []float32 {
			return must(b.Float32s(b.Embedding(l, b.FromInt32(ids, []int{4}))))
		}
		if !equalBits(embed(res), embed(mapped)) || len(res.res.copies) != 0 {
			t.Fatal("Embedding before any Linear: other rows, or it made a copy")
		}
		for _, rows := range []int{1, 5} {
			x := randFloats(r, rows*256, 1)
			dy := randFloats(r, rows*96, 1)
			want := must(mapped.Float32s(mapped.Linear(mapped.FromFloat32(x, []int{rows, 256}, tensor.Float32), l)))
			got := must(res.Float32s(res.Linear(res.FromFloat32(x, []int{rows, 256}, tensor.Float32), l)))
			wantT := must(mapped.Float32s(mapped.LinearT(mapped.FromFloat32(dy, []int{rows, 96}, tensor.Float32), l)))
			gotT := must(res.Float32s(res.LinearT(res.FromFloat32(dy, []int{rows, 96}, tensor.Float32), l)))
			res.Linear(res.FromFloat32(x, []int{rows, 256}, tensor.Float32), heap)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("int8 decode %v, %d rows: y[%d] = %g from the copy, %g from the mapping", intDecode, rows, i, got[i], want[i])
				}
			}
			for i := range wantT {
				if math.Float32bits(gotT[i]) != math.Float32bits(wantT[i]) {
					t.Fatalf("LinearT, %d rows: [%d] = %g from the copy, %g from the mapping", rows, i, gotT[i], wantT[i])
				}
			}
		}
		if !equalBits(embed(res), embed(mapped)) { // from the copy now, where there is one
			t.Fatal("Embedding after the copy: other rows")
		}
		if err := res.Err(); err != nil {
			t.Fatal(err)
		}
		if len(mapped.res.copies) != 0 {
			t.Fatalf("MappedWeights made %d copies", len(mapped.res.copies))
		}
		if !hugePagesOn() {
			t.Logf("no copies on %s (transparent huge pages off or absent): the mapped bytes were read, as they should be", runtime.GOOS)
		} else {
			c := res.res.copies[l.W.(*T)]
			if len(res.res.copies) != 1 || c == nil {
				t.Fatalf("%d copies, want the loaded weight's alone", len(res.res.copies))
			}
			if &c.packed[0] == &l.W.(*T).u[0] || &c.scalesH[0] == &l.Scales.(*T).h[0] {
				t.Fatal("the copy aliases the mapped bytes")
			}
			for _, m := range res.res.maps {
				if len(m) == 0 {
					t.Fatal("empty region")
				}
			}
			if a := uintptr(unsafe.Pointer(&c.packed[0])); a%(2<<20) != 0 {
				t.Fatalf("the first copy starts at %#x, not on a 2 MB boundary", a)
			}
			before := embed(mapped)
			for i := range l.W.(*T).u { // the mapped words change; the copy does not
				l.W.(*T).u[i] ^= 0x11111111
			}
			if !equalBits(embed(res), before) || equalBits(embed(mapped), before) {
				t.Fatal("Embedding does not read the copy once there is one")
			}
		}
		res.Close()
		mapped.Close()
		if res.res.copies != nil || res.res.maps != nil {
			t.Fatal("Close kept the copies")
		}
	}
}
