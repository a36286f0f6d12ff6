//go:build unix

package safetensors

import (
	"fmt"
	"syscall"
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

// Close unmaps the file.
func (m *Mapped) Close() error {
	if m.data == nil {
		return nil
	}
	err := syscall.Munmap(m.data)
	m.data = nil
	return err
}
