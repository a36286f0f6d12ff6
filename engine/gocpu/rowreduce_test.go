package gocpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"perch/engine/tensor"
)

// rowShapes: a row split across the workers (odd length, so the parts
// differ), rows taken whole, and rows shorter than the eight sums.
var rowShapes = [][]int{{1, 262147}, {1, rowSplit}, {3, 70001}, {5, 13}, {4, 7}, {9}, {1, 1}}

// TestArgmaxRows: the row argmax gives reduce's answer, ties (first index
// wins, also across the workers' parts), NaN (the first NaN wins) and
// -Inf rows included, for 1 and 2 workers.
func TestArgmaxRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, threads := range []int{1, 2} {
		b := New(Options{Threads: threads})
		for _, sh := range rowShapes {
			for trial := 0; trial < 6; trial++ {
				n := sh[len(sh)-1]
				v := make([]float32, numel(sh))
				for i := range v {
					v[i] = float32(rng.IntN(50)) // many ties
				}
				switch trial {
				case 1: // the largest twice, in different parts of a split row
					v[len(v)-1], v[len(v)/3] = 99, 99
				case 2:
					v[len(v)-1], v[len(v)/2] = float32(math.NaN()), float32(math.NaN())
				case 3:
					for i := range v {
						v[i] = float32(math.Inf(-1))
					}
				case 4:
					v[min(n/2+1, len(v)-1)] = 1e9 // the winner in a later part
				}
				x := b.FromFloat32(v, sh, tensor.Float32)
				got, err := b.Int32s(b.Argmax(x, -1))
				if err != nil {
					t.Fatal(err)
				}
				want := b.reduce("Argmax", x, -1, false, func(line func(int) float32, n int) float32 {
					best, bi := float32(math.Inf(-1)), 0
					for j := 0; j < n; j++ {
						if v := line(j); v > best || v != v && best == best {
							best, bi = v, j
						}
					}
					return float32(bi)
				}).(*T)
				for r := range got {
					if got[r] != int32(want.f[r]) {
						t.Fatalf("threads %d %v trial %d row %d: argmax %d, want %d", threads, sh, trial, r, got[r], int32(want.f[r]))
					}
				}
			}
		}
		b.Close()
	}
}

// TestSumRows: sums of small integers are exact in any order, so they
// must equal the float64 sum; random values stay within float32's
// rounding of it; NaN and Inf come through; keepdims keeps the axis.
func TestSumRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, threads := range []int{1, 2} {
		b := New(Options{Threads: threads})
		for _, sh := range rowShapes {
			n := sh[len(sh)-1]
			for trial := 0; trial < 3; trial++ {
				v := make([]float32, numel(sh))
				for i := range v {
					if trial == 0 {
						v[i] = float32(rng.IntN(200) - 100)
					} else {
						v[i] = rng.Float32()*2 - 1
					}
				}
				if trial == 2 {
					v[len(v)-1] = float32(math.Inf(1))
				}
				got, err := b.Float32s(b.Sum(b.FromFloat32(v, sh, tensor.Float32), -1, false))
				if err != nil {
					t.Fatal(err)
				}
				for r := range got {
					var want, abs float64
					for _, x := range v[r*n : (r+1)*n] {
						want += float64(x)
						abs += math.Abs(float64(x))
					}
					switch {
					case trial == 0 && float64(got[r]) != want,
						trial == 1 && math.Abs(float64(got[r])-want) > 1e-6*abs+1e-7,
						trial == 2 && r == len(got)-1 && !math.IsInf(float64(got[r]), 1):
						t.Fatalf("threads %d %v trial %d row %d: sum %v, want %v", threads, sh, trial, r, got[r], want)
					}
				}
			}
		}
		if s := b.Sum(b.FromFloat32(make([]float32, 6), []int{2, 3}, tensor.Float32), 1, true).Shape(); len(s) != 2 || s[0] != 2 || s[1] != 1 {
			t.Fatalf("keepdims shape %v", s)
		}
		b.Close()
	}
}

// TestSoftcapFused: the one-pass softcap has the bits of Div, Tanh and
// Mul by the cap on the fast path, and is those ops on the plain one.
func TestSoftcapFused(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, opt := range []Options{{Threads: 2}, {Threads: 1}, {Plain: true}} {
		b := New(opt)
		for _, sh := range [][]int{{1, 1, 262147}, {3, 5000}, {7}} {
			v := make([]float32, numel(sh))
			for i := range v {
				v[i] = (rng.Float32()*2 - 1) * 80
			}
			v[0] = float32(math.NaN())
			x := b.FromFloat32(v, sh, tensor.Float32)
			capT := b.Scalar(30, tensor.Float32)
			want, _ := b.Float32s(b.Mul(b.Tanh(b.Div(x, capT)), capT))
			got, err := b.Float32s(b.Softcap(x, 30))
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%+v %v: [%d] %v, want %v", opt, sh, i, got[i], want[i])
				}
			}
		}
		b.Close()
	}
}

// TestGeluMulFused: the one-pass gated product has the bits of GeluTanh
// then Mul on the fast path (whole chunks, a tail, a NaN, large values),
// and is those ops on the plain one and for shapes that differ.
func TestGeluMulFused(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, opt := range []Options{{Threads: 2}, {Threads: 1}, {Plain: true}} {
		b := New(opt)
		for _, sh := range [][][2]int{{{3, 6144}, {3, 6144}}, {{1, 4099}, {1, 4099}}, {{2, 7}, {1, 7}}} {
			gs, us := []int{sh[0][0], sh[0][1]}, []int{sh[1][0], sh[1][1]}
			g, u := make([]float32, numel(gs)), make([]float32, numel(us))
			for i := range g {
				g[i] = (rng.Float32()*2 - 1) * 12
			}
			for i := range u {
				u[i] = (rng.Float32()*2 - 1) * 3
			}
			g[1] = float32(math.NaN())
			tg, tu := b.FromFloat32(g, gs, tensor.Float32), b.FromFloat32(u, us, tensor.Float32)
			want, _ := b.Float32s(b.Mul(b.GeluTanh(tg), tu))
			got, err := b.Float32s(b.GeluMul(tg, tu))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%+v %v: %d values, want %d", opt, sh, len(got), len(want))
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%+v %v: [%d] %v, want %v", opt, sh, i, got[i], want[i])
				}
			}
		}
		b.Close()
	}
}

// TestRowKernelsBits: argmaxRow and sumRow (AVX2 where the CPU has it)
// give the plain loops' answers and bits on lengths around the 8-lane
// blocks, with the largest value in the tail, tied, a zero of either sign,
// -Inf everywhere, and NaN in the body or the tail.
func TestRowKernelsBits(t *testing.T) {
	argmaxRef := func(x []float32) int {
		best, bi := float32(0), -1
		for j, v := range x {
			if bi < 0 || v > best || v != v && best == best {
				best, bi = v, j
			}
		}
		return max(bi, 0)
	}
	sumRef := func(x []float32) float32 {
		var a [8]float32
		for j, v := range x[:len(x)&^7] {
			a[j%8] += v
		}
		for j := len(x) &^ 7; j < len(x); j++ {
			a[j-len(x)&^7] += x[j]
		}
		return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]))
	}
	rng := rand.New(rand.NewPCG(13, 14))
	negZero := float32(math.Copysign(0, -1))
	for _, n := range []int{1, 7, 63, 64, 65, 71, 72, 1000, 4099} {
		for trial := 0; trial < 8; trial++ {
			x := make([]float32, n)
			for i := range x {
				x[i] = rng.Float32()*200 - 100
			}
			switch trial {
			case 1:
				x[n-1] = 1e6 // in the tail
			case 2:
				x[n/3], x[n-1] = 1e6, 1e6
			case 3:
				for i := range x {
					x[i] = -1 - float32(i%5)
				}
				x[n/2], x[n-1] = negZero, 0
			case 4:
				for i := range x {
					x[i] = float32(math.Inf(-1))
				}
			case 5:
				x[n/2] = float32(math.NaN())
			case 6:
				x[n-1] = float32(math.NaN())
			case 7:
				for i := range x {
					x[i] = 7
				}
			}
			if got, want := argmaxRow(x), argmaxRef(x); got != want {
				t.Fatalf("n=%d trial %d: argmax %d, want %d", n, trial, got, want)
			}
			if got, want := sumRow(x), sumRef(x); math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
				t.Fatalf("n=%d trial %d: sum %v, want %v", n, trial, got, want)
			}
		}
	}
}

// TestSoftmaxRowsBits: the attention's softmax (max by AVX2 where the CPU
// has it; rows summed four side by side) gives softmaxLine's bits on rows around the 8-lane blocks, with
// masked keys, zeros of both signs as the largest, a NaN, +Inf and a row
// of -Inf only.
func TestSoftmaxRowsBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	negZero := float32(math.Copysign(0, -1))
	for _, n := range []int{1, 7, 63, 64, 65, 100, 2520} {
		var rows [][]float32
		for c := 0; c < 6; c++ {
			v := make([]float32, n)
			for i := range v {
				v[i] = (rng.Float32()*2 - 1) * 20
			}
			switch c {
			case 1:
				for i := 0; i < n; i += 3 {
					v[i] = float32(math.Inf(-1))
				}
			case 2:
				for i := range v {
					v[i] = -abs32(v[i]) - 1
				}
				v[n/2], v[n-1] = 0, negZero
			case 3:
				v[n-1] = float32(math.NaN())
			case 4:
				v[n/3] = float32(math.Inf(1))
			case 5:
				for i := range v {
					v[i] = float32(math.Inf(-1))
				}
			}
			rows = append(rows, v)
			want := append([]float32(nil), v...)
			softmaxLine(want)
			softmaxRows(v, 1, n)
			for i := range v {
				if math.Float32bits(v[i]) != math.Float32bits(want[i]) && !(v[i] != v[i] && want[i] != want[i]) {
					t.Fatalf("n=%d case %d [%d]: %g, softmaxLine %g", n, c, i, v[i], want[i])
				}
			}
		}
		// the same rows (refilled) side by side, 1 to 6 of them: each row's
		// bits as alone
		for k := 1; k <= len(rows); k++ {
			block := make([]float32, 0, k*n)
			for j := 0; j < k; j++ {
				src := rows[(j*5+k)%len(rows)]
				for i := range src {
					src[i] = (rng.Float32()*2 - 1) * 20
				}
				if j%3 == 1 {
					src[j%n] = float32(math.Inf(-1))
				}
				if j == 4 {
					src[n-1] = float32(math.NaN())
				}
				block = append(block, src...)
			}
			want := append([]float32(nil), block...)
			for j := 0; j < k; j++ {
				softmaxLine(want[j*n : (j+1)*n])
			}
			softmaxRows(block, k, n)
			for i := range block {
				if math.Float32bits(block[i]) != math.Float32bits(want[i]) && !(block[i] != block[i] && want[i] != want[i]) {
					t.Fatalf("n=%d %d rows [%d]: %g, softmaxLine %g", n, k, i, block[i], want[i])
				}
			}
		}
	}
}
