//go:build (!amd64 && !arm64) || purego

package gocpu

// archKernelSets: no assembly on this architecture (or with -tags purego);
// the portable kernels in kernels_generic.go run everywhere.
func archKernelSets() []kernelSet { return nil }

// missingKernelSets: none to leave out.
func missingKernelSets() map[string]string { return nil }
