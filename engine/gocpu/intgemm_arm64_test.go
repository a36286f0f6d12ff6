//go:build !purego

package gocpu

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// TestIntKernelSDOTEqualsGo: the SDOT kernel sums the same integers as
// q4i8Go and scales them in its order with the fused multiply-adds Go
// compiles on arm64, so its blocks are q4i8Go's bit for bit.
func TestIntKernelSDOTEqualsGo(t *testing.T) {
	if !cpu.ARM64.HasASIMDDP {
		t.Skip("kernel set neondot not run: " + missingKernelSets()["neondot"])
	}
	checkIntBits(t, neonDotKernels, goKernels)
}
