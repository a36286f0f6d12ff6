package safetensors

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"sort"
)

// Tensor is one tensor to write: raw little-endian bytes of the given dtype.
type Tensor struct {
	Name  string
	DType string
	Shape []int
	Data  []byte
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
		header[t.Name] = map[string]any{
			"dtype": t.DType, "shape": t.Shape,
			"data_offsets": []uint64{off, off + uint64(len(t.Data))},
		}
		off += uint64(len(t.Data))
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
		w.Write(t.Data)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
