package safetensors

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
)

// Tensor is one tensor to write: raw little-endian bytes of the given
// dtype, or, when Data is nil, a Stream that writes exactly that many
// bytes (so a multi-gigabyte checkpoint is never held in memory).
type Tensor struct {
	Name   string
	DType  string
	Shape  []int
	Data   []byte
	Stream func(w io.Writer) error
}

// Bytes is the tensor's payload size: len(Data), or dtype size × elements.
func (t Tensor) Bytes() int64 {
	if t.Data != nil || t.Stream == nil {
		return int64(len(t.Data))
	}
	n := int64(dtypeSizes[t.DType])
	for _, d := range t.Shape {
		n *= int64(d)
	}
	return n
}

// Write stores tensors (sorted by name, like MLX does) in a new file at path.
func Write(path string, tensors []Tensor, metadata map[string]string) error {
	sorted := append([]Tensor(nil), tensors...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	header := map[string]any{}
	if len(metadata) > 0 {
		header["__metadata__"] = metadata
	}
	var off uint64
	for _, t := range sorted {
		if _, ok := dtypeSizes[t.DType]; !ok {
			return fmt.Errorf("write %s: tensor %q: unknown dtype %q", path, t.Name, t.DType)
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{} // a 0-d tensor: readers expect [], not null
		}
		n := uint64(t.Bytes())
		header[t.Name] = map[string]any{"dtype": t.DType, "shape": shape, "data_offsets": []uint64{off, off + n}}
		off += n
	}
	hdr, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(hdr)%8 != 0 { // keep the data 8-byte aligned, as the format suggests
		hdr = append(hdr, ' ')
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(hdr)))
	w.Write(lenBuf[:])
	w.Write(hdr)
	for _, t := range sorted {
		if err := writeData(w, t); err != nil {
			f.Close()
			return fmt.Errorf("write %s: tensor %q: %w", path, t.Name, err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// writeData writes t's bytes, checking that a Stream wrote exactly Bytes().
func writeData(w io.Writer, t Tensor) error {
	if t.Data != nil || t.Stream == nil {
		_, err := w.Write(t.Data)
		return err
	}
	c := &countingWriter{w: w}
	if err := t.Stream(c); err != nil {
		return err
	}
	if c.n != t.Bytes() {
		return fmt.Errorf("stream wrote %d bytes for %s %v (want %d)", c.n, t.DType, t.Shape, t.Bytes())
	}
	return nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
