//go:build !purego

package gocpu

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// TestIntKernelAVXVNNIEqualsAVX2: the VEX VPDPBUSD kernel sums the same
// integers as the VPMADDUBSW one and scales them in the same order, so its
// blocks are the AVX2 kernel's bit for bit.
func TestIntKernelAVXVNNIEqualsAVX2(t *testing.T) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA || !cpu.X86.HasAVXVNNI {
		t.Skip("kernel set avxvnni not run: " + missingKernelSets()["avxvnni"])
	}
	checkIntBits(t, avxVNNIKernels, avx2Kernels)
}
