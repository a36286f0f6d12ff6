//go:build !purego

package gocpu

import "golang.org/x/sys/cpu"

// The arm64 kernel set: the portable kernels with the integer prefill's
// q4i8 in NEON with the ARMv8.2 dot product (kernels_int_arm64.s), on CPUs
// that have it (every Apple M-series; Cortex-A55/A75 and later, Neoverse).

func init() {
	if sets := archKernelSets(); len(sets) > 0 {
		kern = sets[len(sets)-1]
	}
}

// archKernelSets are the assembly sets this CPU runs, fastest last.
func archKernelSets() []kernelSet {
	if cpu.ARM64.HasASIMDDP {
		return []kernelSet{neonDotKernels}
	}
	return nil
}

// missingKernelSets names the assembly sets of this architecture that this
// CPU (or GODEBUG=cpu.asimddp=off) leaves out, each with why.
func missingKernelSets() map[string]string {
	if !cpu.ARM64.HasASIMDDP {
		return map[string]string{"neondot": "this CPU lacks the ARMv8.2 dot product, asimddp (or GODEBUG turned it off)"}
	}
	return nil
}

// neonDotKernels is the portable set with q4i8 summed by SDOT; its results
// are the portable set's bit for bit.
var neonDotKernels = func() kernelSet {
	k := goKernels
	k.name, k.q4i8 = "neondot", q4i8SDOT
	return k
}()

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
