//go:build !unix

package gocpu

import "time"

// processCPU: not measured here (benchmarks then report +Inf per CPU-second).
func processCPU() time.Duration { return 0 }
