package gocpu

import (
	"math"
	"math/rand"
	"testing"
)

// TestArithVecBits: arithVec's vector bulk, and arithScalar's (one value
// for all of y), give the Go loop's bits for every operator, length and
// special value (in place too).
func TestArithVecBits(t *testing.T) {
	r := rand.New(rand.NewSource(26))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-45, 3e38}
	scalar := func(code byte, x, y, d []float32) {
		if len(y) > 0 {
			arithScalar(code, x, y[0], d)
		}
	}
	for _, code := range []byte{'+', '-', '*', '/', 'M', 'm'} {
		for _, n := range []int{0, 1, 7, 8, 9, 16, 33, 1000} {
			x, y := randFloats(r, n, 10), randFloats(r, n, 10)
			for i := 0; i < n; i += 3 {
				x[i] = special[r.Intn(len(special))]
				y[(i*5)%n] = special[r.Intn(len(special))]
			}
			checkArith(t, "arithVec", code, x, y, arithVec)
			v := special[r.Intn(len(special))]
			if n%2 == 0 {
				v = 1 + r.Float32()
			}
			for k := range y {
				y[k] = v
			}
			checkArith(t, "arithScalar", code, x, y, scalar)
		}
	}
}

// checkArith: f's d = x op y against the Go expression, out of place and
// in place.
func checkArith(t *testing.T, name string, code byte, x, y []float32, f func(code byte, x, y, d []float32)) {
	t.Helper()
	n := len(x)
	want := make([]float32, n)
	for k := range want {
		switch code {
		case '+':
			want[k] = x[k] + y[k]
		case '-':
			want[k] = x[k] - y[k]
		case '*':
			want[k] = x[k] * y[k]
		case '/':
			want[k] = x[k] / y[k]
		case 'M':
			want[k] = fmax(x[k], y[k])
		case 'm':
			want[k] = fmin(x[k], y[k])
		}
	}
	got := make([]float32, n)
	f(code, x, y, got)
	inPlace := append([]float32(nil), x...)
	f(code, inPlace, y, inPlace)
	for k := range want {
		if math.Float32bits(got[k]) != math.Float32bits(want[k]) && !(got[k] != got[k] && want[k] != want[k]) ||
			math.Float32bits(inPlace[k]) != math.Float32bits(got[k]) && !(got[k] != got[k] && inPlace[k] != inPlace[k]) {
			t.Fatalf("%s %c n=%d [%d]: %g %c %g = %g (in place %g), want %g", name, code, n, k, x[k], code, y[k], got[k], inPlace[k], want[k])
		}
	}
}
