//go:build !purego

package gocpu

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// TestIntKernelVNNIEqualsAVX2: the VPDPBUSD kernel sums the same integers
// as the VPMADDUBSW one and scales them in the same order, so its blocks
// are the AVX2 kernel's bit for bit, on random values and on the extremes
// (every weight 15 against ±127, where the AVX2 kernel's int16 sums are
// largest).
func TestIntKernelVNNIEqualsAVX2(t *testing.T) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA || !hasAVX512() || !cpu.X86.HasAVX512VNNI {
		t.Skip("kernel set avx512vnni not run: this CPU lacks AVX2/FMA or AVX-512 F/BW/VL with VNNI (or GODEBUG turned them off)")
	}
	checkIntBits(t, avx512VNNIKernels, avx2Kernels)
}
