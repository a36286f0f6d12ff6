package gocpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"perch/engine/tensor"
)

// TestFastArithMatchesGeneral: the tight loops give the same bits as the
// per-element path for every layout they take.
func TestFastArithMatchesGeneral(t *testing.T) {
	b := New(Options{})
	rng := rand.New(rand.NewPCG(1, 2))
	rnd := func(shape ...int) *T {
		v := make([]float32, numel(shape))
		for i := range v {
			v[i] = rng.Float32()*4 - 2
		}
		return b.FromFloat32(v, shape, tensor.Float32).(*T)
	}
	ops := map[byte]floatFn{
		'+': func(a, c float32) float32 { return a + c }, '-': func(a, c float32) float32 { return a - c },
		'*': func(a, c float32) float32 { return a * c }, '/': func(a, c float32) float32 { return a / c },
		'M': fmax, 'm': fmin,
	}
	layouts := [][2][]int{
		{{3, 5, 7}, {3, 5, 7}}, {{3, 5, 7}, {}}, {{3, 5, 7}, {7}}, {{3, 5, 7}, {1, 5, 7}}, {{}, {4, 6}}, {{2, 40000}, {40000}},
		{{3, 70000}, {}}, {{}, {90000}}, {{2, 5, 3, 8}, {2, 5, 1, 8}}, {{1, 40, 12, 32}, {1, 40, 1, 32}}, {{4, 3, 16}, {4, 1, 16}}, {{3, 9, 16}, {3, 1, 1}},
	}
	for code, f := range ops {
		for _, l := range layouts {
			x, y := rnd(l[0]...), rnd(l[1]...)
			got := b.arithOp("op", code, x, y, f, nil).(*T)
			want := b.arithOp("op", 0, x, y, f, nil).(*T)
			if b.Err() != nil {
				t.Fatal(b.Err())
			}
			for i := range want.f {
				if got.f[i] != want.f[i] {
					t.Fatalf("%c %v %v: element %d %v, want %v", code, l[0], l[1], i, got.f[i], want.f[i])
				}
			}
		}
	}
}

// TestTanhKernels: every set's float32 tanh against float64 math.Tanh,
// within 6e-7 relative (+1e-9 absolute; 10 float32 ulps below 1) over a
// dense sweep and the edges.
func TestTanhKernels(t *testing.T) {
	var in []float32
	for x := -10.0; x <= 10; x += 1.0 / 4096 {
		in = append(in, float32(x))
	}
	in = append(in, 0, float32(math.Copysign(0, -1)), 1e-30, -3.9e-4, 4e-4, 7.9, 100, -1e30, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()))
	for _, ks := range testedKernelSets(t) {
		var worst float64
		for _, n := range []int{len(in), 7} {
			v := append([]float32(nil), in[len(in)-n:]...)
			ks.tanh(v)
			for i, x := range in[len(in)-n:] {
				want := math.Tanh(float64(x))
				got := float64(v[i])
				if math.IsNaN(want) != math.IsNaN(got) || math.Abs(got-want) > 6e-7*math.Abs(want)+1e-9 {
					t.Fatalf("%s: tanh(%g) = %g, want %g", ks.name, x, got, want)
				}
				if want != 0 && !math.IsNaN(want) {
					worst = math.Max(worst, math.Abs(got-want)/math.Abs(want))
				}
			}
		}
		t.Logf("%s: worst relative error %.3g", ks.name, worst)
	}
}

// TestTransposeExact: gemmLinear's tiled transpose (8×8 squares by AVX2
// where the CPU has it) moves every value to its place, for ragged and
// aligned shapes.
func TestTransposeExact(t *testing.T) {
	b := New(Options{Threads: 2})
	for _, sh := range [][2]int{{1, 1}, {1, 37}, {37, 1}, {33, 65}, {64, 64}, {768, 70}, {70, 300}} {
		rows, cols := sh[0], sh[1]
		src := make([]float32, rows*cols)
		for i := range src {
			src[i] = float32(i)
		}
		dst := make([]float32, rows*cols)
		b.transpose(src, rows, cols, dst)
		for r := 0; r < rows; r++ {
			for c := 0; c < cols; c++ {
				if dst[c*rows+r] != src[r*cols+c] {
					t.Fatalf("%dx%d: [%d,%d] = %v, want %v", rows, cols, c, r, dst[c*rows+r], src[r*cols+c])
				}
			}
		}
	}
}
