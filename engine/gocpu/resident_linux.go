package gocpu

import (
	"os"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// hugeRegion maps size bytes (a multiple of 2 MB) of anonymous memory
// asking for transparent huge pages, or returns nil where the kernel has
// them off ("[never]") or refuses. The region starts on a 2 MB boundary
// so that every 2 MB of it can be one page; mapping is what freeRegion
// takes.
func hugeRegion(size int) (region, mapping []byte) {
	if !hugePagesOn() {
		return nil, nil
	}
	const huge = 2 << 20
	m, err := syscall.Mmap(-1, 0, size+huge, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, nil
	}
	lead := (huge - int(uintptr(unsafe.Pointer(&m[0])))%huge) % huge
	region = m[lead : lead+size : lead+size]
	if err := syscall.Madvise(region, 14 /* MADV_HUGEPAGE */); err != nil {
		syscall.Munmap(m)
		return nil, nil
	}
	return region, m
}

// freeRegion unmaps a hugeRegion's mapping.
func freeRegion(mapping []byte) { syscall.Munmap(mapping) }

// hugePagesOn reports whether the kernel has transparent huge pages on
// (read once).
var hugePagesOn = sync.OnceValue(func() bool {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && !strings.Contains(string(b), "[never]")
})

// pageOut asks the kernel to reclaim the whole pages of src now that its
// copy is made (MADV_PAGEOUT, Linux 5.4+): a checkpoint's file pages leave
// the process's resident set instead of counting twice beside the copy.
// It loses nothing: file pages come back from the file if read again (a
// row of the tied embedding), anonymous ones from swap or not at all
// (without swap they stay). Errors (older kernels) are ignored.
func pageOut(src []byte) {
	if len(src) == 0 {
		return
	}
	const page = 4096
	lo := (int(uintptr(unsafe.Pointer(&src[0]))) + page - 1) &^ (page - 1)
	hi := int(uintptr(unsafe.Pointer(&src[0]))+uintptr(len(src))) &^ (page - 1)
	if hi > lo {
		syscall.Syscall(syscall.SYS_MADVISE, uintptr(lo), uintptr(hi-lo), 21 /* MADV_PAGEOUT */)
	}
}
