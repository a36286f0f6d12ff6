package fetch

import "runtime"

// allocs reports the bytes allocated so far by this process.
func allocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}
