//go:build !amd64 || purego

package gocpu

// Where there is no AVX2 code (other architectures, or -tags purego) the
// vectorized helpers decline and their callers' Go loops do the work.

// arithVec8 and arithScalar8: the Go loops do it all.
func arithVec8(code byte, x, y, d []float32) int { return 0 }

func arithScalar8(code byte, x []float32, v float32, d []float32) int { return 0 }

// argmaxRow8, maxRow8 and sumRow8: the Go loops do it all.
func argmaxRow8(x []float32) (int, bool) { return 0, false }

func maxRow8(x []float32) (float32, bool) { return 0, false }

func sumRow8(x []float32, a *[8]float32) int { return 0 }

// panelWords16: intPanel.load's loop does it.
func panelWords16(p, packed []uint32, row0, words int) bool { return false }

// transpose8x8: transpose8's loop does it.
func transpose8x8(src []float32, ls int, dst []float32, ld int) bool { return false }
