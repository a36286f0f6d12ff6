//go:build !purego

package gocpu

import "golang.org/x/sys/cpu"

//go:noescape
func add8(x, y, d *float32, n int)

//go:noescape
func sub8(x, y, d *float32, n int)

//go:noescape
func mul8(x, y, d *float32, n int)

//go:noescape
func div8(x, y, d *float32, n int)

//go:noescape
func addS8(x *float32, v float32, d *float32, n int)

//go:noescape
func subS8(x *float32, v float32, d *float32, n int)

//go:noescape
func mulS8(x *float32, v float32, d *float32, n int)

//go:noescape
func divS8(x *float32, v float32, d *float32, n int)

//go:noescape
func maxS8(x *float32, v float32, d *float32, n int)

//go:noescape
func minS8(x *float32, v float32, d *float32, n int)

var hasAVX2 = cpu.X86.HasAVX2

// arithVec8 does d[k] = x[k] op y[k] for the first len(y)&^7 values with
// AVX2 (+, -, *, /: one IEEE operation per lane, as the Go loop) and
// returns how many it did.
func arithVec8(code byte, x, y, d []float32) int {
	n := len(y) &^ 7
	if n == 0 || !hasAVX2 {
		return 0
	}
	_, _ = x[n-1], d[n-1]
	switch code {
	case '+':
		add8(&x[0], &y[0], &d[0], n)
	case '-':
		sub8(&x[0], &y[0], &d[0], n)
	case '*':
		mul8(&x[0], &y[0], &d[0], n)
	case '/':
		div8(&x[0], &y[0], &d[0], n)
	default:
		return 0
	}
	return n
}

// arithScalar8 does d[k] = x[k] op v for the first len(x)&^7 values with
// AVX2 (+, -, *, /, v broadcast: one IEEE operation per lane, as the Go
// loop; M and m, fmax and fmin with their NaN rule) and returns how many
// it did.
func arithScalar8(code byte, x []float32, v float32, d []float32) int {
	n := len(x) &^ 7
	if n == 0 || !hasAVX2 {
		return 0
	}
	_ = d[n-1]
	switch code {
	case '+':
		addS8(&x[0], v, &d[0], n)
	case '-':
		subS8(&x[0], v, &d[0], n)
	case '*':
		mulS8(&x[0], v, &d[0], n)
	case '/':
		divS8(&x[0], v, &d[0], n)
	case 'M':
		maxS8(&x[0], v, &d[0], n)
	case 'm':
		minS8(&x[0], v, &d[0], n)
	default:
		return 0
	}
	return n
}
