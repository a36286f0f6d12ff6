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
