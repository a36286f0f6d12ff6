//go:build unix

package safetensors

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Mapped is a safetensors file mapped read-only into memory.
type Mapped struct {
	*File
	data []byte
}

// Map parses path's header and maps the whole file read-only.
func Map(path string) (*Mapped, error) {
	f, hdr, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if hdr.Size == 0 {
		return &Mapped{File: hdr}, nil
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(hdr.Size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("%s: map: %w", path, err)
	}
	return &Mapped{File: hdr, data: data}, nil
}

// Bytes returns the raw little-endian bytes of a tensor; they stay valid
// until Close.
func (m *Mapped) Bytes(t TensorInfo) []byte {
	return m.data[t.Begin:t.End:t.End]
}

// Release drops the process's pages of t's bytes (the page-rounded range,
// so up to a page of each neighbour too), for a caller that has copied
// them: a copy-loading backend would otherwise keep every weight resident
// twice, its copy and the file pages the copy read. The bytes stay valid:
// the mapping is a read-only shared file mapping, so a later read faults
// the pages back in from the file.
func (m *Mapped) Release(t TensorInfo) error {
	if m.data == nil || t.End <= t.Begin {
		return nil
	}
	page := int64(os.Getpagesize())
	lo, hi := t.Begin/page*page, min((t.End+page-1)/page*page, int64(len(m.data)))
	if err := unix.Madvise(m.data[lo:hi], unix.MADV_DONTNEED); err != nil {
		return fmt.Errorf("%s: release %d bytes: %w", m.Path, hi-lo, err)
	}
	return nil
}

// Close unmaps the file.
func (m *Mapped) Close() error {
	if m.data == nil {
		return nil
	}
	err := syscall.Munmap(m.data)
	m.data = nil
	return err
}
