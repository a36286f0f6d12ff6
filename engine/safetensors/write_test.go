package safetensors

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

// TestWriteScalarShape: a 0-d tensor is written with "shape": [] (readers
// such as safetensors' own reject null) and reads back as rank 0.
func TestWriteScalarShape(t *testing.T) {
	p := writeTemp(t, []Tensor{{Name: "s", DType: "F32", Data: f32bytes(2.5)}})
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(`"shape":[]`)) || bytes.Contains(raw, []byte(`null`)) {
		t.Fatalf("header %q", raw[8:60])
	}
	m, err := Map(p)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if s := m.Tensors["s"]; len(s.Shape) != 0 || s.Elements() != 1 {
		t.Fatalf("read back %+v", s)
	}
}

// TestWriteStream: streamed tensors land where the header says, and a
// stream that writes the wrong number of bytes is an error.
func TestWriteStream(t *testing.T) {
	fill := func(v ...float32) func(io.Writer) error {
		return func(w io.Writer) error { _, err := w.Write(f32bytes(v...)); return err }
	}
	p := writeTemp(t, []Tensor{
		{Name: "b", DType: "F32", Shape: []int{3}, Stream: fill(4, 5, 6)},
		{Name: "a", DType: "F32", Shape: []int{1}, Data: f32bytes(1)},
	})
	m, err := Map(p)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if got := m.Bytes(m.Tensors["b"]); !bytes.Equal(got, f32bytes(4, 5, 6)) {
		t.Fatalf("b = %v", got)
	}
	err = Write(p, []Tensor{{Name: "x", DType: "F32", Shape: []int{2}, Stream: fill(1)}}, nil)
	if err == nil || !strings.Contains(err.Error(), "stream wrote 4 bytes") {
		t.Fatalf("short stream: %v", err)
	}
}
