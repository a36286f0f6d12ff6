// Package safetensors reads and validates safetensors files: an 8-byte
// little-endian header length, a JSON header naming each tensor's dtype,
// shape and byte range, then the data. Nothing in a header is trusted: its
// size is capped, every range must lie inside the file, match its dtype and
// shape, and not overlap another.
package safetensors

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// MaxHeaderBytes caps the JSON header; real Gemma-4 shards have ~200 KB.
const MaxHeaderBytes = 100 << 20

// maxDims caps tensor rank; no real tensor has more than a handful.
const maxDims = 8

// TensorInfo is one tensor's entry. Begin and End are absolute file offsets.
type TensorInfo struct {
	Name  string
	DType string
	Shape []int
	Begin int64
	End   int64
}

// Elements is the number of elements the shape holds.
func (t TensorInfo) Elements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= int64(d)
	}
	return n
}

// File is a parsed, validated header.
type File struct {
	Path       string
	Size       int64
	DataOffset int64
	Tensors    map[string]TensorInfo
	Metadata   map[string]string
}

// Names returns the tensor names, sorted.
func (f *File) Names() []string {
	names := make([]string, 0, len(f.Tensors))
	for n := range f.Tensors {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

var dtypeSizes = map[string]int{
	"F64": 8, "F32": 4, "F16": 2, "BF16": 2,
	"I64": 8, "I32": 4, "I16": 2, "I8": 1,
	"U64": 8, "U32": 4, "U16": 2, "U8": 1, "BOOL": 1,
}

// DTypeSize is the byte size of one element of a safetensors dtype.
func DTypeSize(dt string) (int, bool) {
	n, ok := dtypeSizes[dt]
	return n, ok
}

// ReadHeader opens path and parses its header.
func ReadHeader(path string) (*File, error) {
	f, hdr, err := open(path)
	if err != nil {
		return nil, err
	}
	f.Close()
	return hdr, nil
}

// open opens path and parses its header; the caller closes the file.
func open(path string) (*os.File, *File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil {
		var hdr *File
		if hdr, err = Parse(f, st.Size(), path); err == nil {
			return f, hdr, nil
		}
	}
	f.Close()
	return nil, nil, err
}

// Parse reads and validates the header of a safetensors file of the given
// size; name is used in error messages.
func Parse(r io.ReaderAt, size int64, name string) (*File, error) {
	var lenBuf [8]byte
	if size < 8 {
		return nil, fmt.Errorf("%s: not a safetensors file: %d bytes, shorter than the 8-byte header length", name, size)
	}
	if _, err := r.ReadAt(lenBuf[:], 0); err != nil {
		return nil, fmt.Errorf("%s: read header length: %w", name, err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > MaxHeaderBytes {
		return nil, fmt.Errorf("%s: header claims %d bytes, over the %d-byte limit (corrupt or hostile file)", name, n, MaxHeaderBytes)
	}
	if int64(n) > size-8 {
		return nil, fmt.Errorf("%s: header claims %d bytes but the file has only %d after the length (truncated?)", name, n, size-8)
	}
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, 8); err != nil {
		return nil, fmt.Errorf("%s: read header: %w", name, err)
	}
	return parseJSON(buf, size, name)
}

type rawEntry struct {
	DType   string   `json:"dtype"`
	Shape   []int64  `json:"shape"`
	Offsets []uint64 `json:"data_offsets"`
}

func parseJSON(buf []byte, size int64, name string) (*File, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(buf, &raw); err != nil {
		return nil, fmt.Errorf("%s: header is not a JSON object: %w", name, err)
	}
	dataOff := int64(8 + len(buf))
	f := &File{Path: name, Size: size, DataOffset: dataOff, Tensors: make(map[string]TensorInfo, len(raw))}
	for key, msg := range raw {
		if key == "__metadata__" {
			if err := json.Unmarshal(msg, &f.Metadata); err != nil {
				return nil, fmt.Errorf("%s: __metadata__ must map strings to strings: %w", name, err)
			}
			continue
		}
		t, err := parseEntry(key, msg, size-dataOff)
		if err != nil {
			return nil, fmt.Errorf("%s: tensor %q: %w", name, key, err)
		}
		t.Begin += dataOff
		t.End += dataOff
		f.Tensors[key] = t
	}
	if err := checkOverlap(f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return f, nil
}

func parseEntry(key string, msg json.RawMessage, dataLen int64) (TensorInfo, error) {
	var e rawEntry
	if err := json.Unmarshal(msg, &e); err != nil {
		return TensorInfo{}, fmt.Errorf("bad entry: %w", err)
	}
	if key == "" || strings.ContainsRune(key, 0) {
		return TensorInfo{}, fmt.Errorf("bad tensor name")
	}
	esize, ok := dtypeSizes[e.DType]
	if !ok {
		return TensorInfo{}, fmt.Errorf("unknown dtype %q", e.DType)
	}
	if len(e.Shape) > maxDims {
		return TensorInfo{}, fmt.Errorf("rank %d over the limit of %d", len(e.Shape), maxDims)
	}
	if len(e.Offsets) != 2 {
		return TensorInfo{}, fmt.Errorf("data_offsets must have 2 entries, has %d", len(e.Offsets))
	}
	begin, end := e.Offsets[0], e.Offsets[1]
	if begin > end || end > uint64(dataLen) {
		return TensorInfo{}, fmt.Errorf("data_offsets [%d, %d] outside the %d data bytes of the file (truncated?)", begin, end, dataLen)
	}
	shape := make([]int, len(e.Shape))
	elems := uint64(1)
	for i, d := range e.Shape {
		if d < 0 || d > dataLen {
			return TensorInfo{}, fmt.Errorf("dimension %d of shape %v is impossible", i, e.Shape)
		}
		shape[i] = int(d)
		if d != 0 && elems > uint64(dataLen)/uint64(d) {
			return TensorInfo{}, fmt.Errorf("shape %v is larger than the file", e.Shape)
		}
		elems *= uint64(d)
	}
	if want := elems * uint64(esize); want != end-begin {
		return TensorInfo{}, fmt.Errorf("%s %v needs %d bytes but data_offsets span %d", e.DType, e.Shape, want, end-begin)
	}
	return TensorInfo{Name: key, DType: e.DType, Shape: shape, Begin: int64(begin), End: int64(end)}, nil
}

func checkOverlap(f *File) error {
	ts := make([]TensorInfo, 0, len(f.Tensors))
	for _, t := range f.Tensors {
		if t.End > t.Begin {
			ts = append(ts, t)
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Begin < ts[j].Begin })
	for i := 1; i < len(ts); i++ {
		if ts[i].Begin < ts[i-1].End {
			return fmt.Errorf("tensors %q and %q overlap in the file", ts[i-1].Name, ts[i].Name)
		}
	}
	return nil
}
