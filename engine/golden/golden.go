// Package golden reads the reference dumps (golden.safetensors) that the
// tests compare against, and measures how far a result is from them.
package golden

import (
	"encoding/binary"
	"fmt"
	"math"

	"perch/engine/safetensors"
)

// File is an open golden dump.
type File struct {
	m *safetensors.Mapped
}

// Open maps a golden safetensors file.
func Open(path string) (*File, error) {
	m, err := safetensors.Map(path)
	if err != nil {
		return nil, err
	}
	return &File{m: m}, nil
}

func (f *File) Close() error { return f.m.Close() }

// Has reports whether name is in the dump.
func (f *File) Has(name string) bool { _, ok := f.m.Tensors[name]; return ok }

// Shape of a tensor.
func (f *File) Shape(name string) []int { return f.m.Tensors[name].Shape }

// F32 returns a float32 tensor's values.
func (f *File) F32(name string) ([]float32, error) {
	t, ok := f.m.Tensors[name]
	if !ok {
		return nil, fmt.Errorf("golden has no %q", name)
	}
	raw := f.m.Bytes(t)
	switch t.DType {
	case "F32":
		out := make([]float32, len(raw)/4)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return out, nil
	case "BF16":
		out := make([]float32, len(raw)/2)
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16)
		}
		return out, nil
	}
	return nil, fmt.Errorf("golden %q is %s, not a float tensor", name, t.DType)
}

// I32 returns an integer tensor's values (int32, or uint8/bool masks).
func (f *File) I32(name string) ([]int32, error) {
	t, ok := f.m.Tensors[name]
	if !ok {
		return nil, fmt.Errorf("golden has no %q", name)
	}
	raw := f.m.Bytes(t)
	switch t.DType {
	case "I32":
		out := make([]int32, len(raw)/4)
		for i := range out {
			out[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return out, nil
	case "U8", "BOOL":
		out := make([]int32, len(raw))
		for i, v := range raw {
			out[i] = int32(v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("golden %q is %s, not an integer tensor", name, t.DType)
}

// Diff summarises |got - want|.
type Diff struct {
	Max, Mean float64
	At        int
}

func (d Diff) String() string { return fmt.Sprintf("max %.3g (at %d), mean %.3g", d.Max, d.At, d.Mean) }

// Compare returns the absolute differences; lengths must match.
func Compare(got, want []float32) (Diff, error) {
	if len(got) != len(want) {
		return Diff{}, fmt.Errorf("length %d, want %d", len(got), len(want))
	}
	var d Diff
	var sum float64
	for i := range got {
		e := math.Abs(float64(got[i]) - float64(want[i]))
		if math.IsNaN(e) {
			return Diff{Max: math.Inf(1), At: i}, fmt.Errorf("NaN at %d", i)
		}
		sum += e
		if e > d.Max {
			d.Max, d.At = e, i
		}
	}
	if len(got) > 0 {
		d.Mean = sum / float64(len(got))
	}
	return d, nil
}
