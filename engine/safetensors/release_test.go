//go:build unix

package safetensors

import (
	"bytes"
	"testing"
)

// TestReleaseKeepsBytes: after Release (of every tensor, an empty one
// included, and twice) each tensor still reads back as written, and a
// closed file's Release does nothing.
func TestReleaseKeepsBytes(t *testing.T) {
	big := bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8}, 3000) // spans pages
	p := writeTemp(t, []Tensor{
		{Name: "a", DType: "F32", Shape: []int{1}, Data: f32bytes(1.5)},
		{Name: "big", DType: "U32", Shape: []int{len(big) / 4}, Data: big},
		{Name: "empty", DType: "F32", Shape: []int{0}, Data: []byte{}},
	})
	m, err := Map(p)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{"a": f32bytes(1.5), "big": big, "empty": {}}
	for round := 0; round < 2; round++ {
		for name := range want {
			if err := m.Release(m.Tensors[name]); err != nil {
				t.Fatalf("release %s: %v", name, err)
			}
		}
		for name, w := range want {
			if got := m.Bytes(m.Tensors[name]); !bytes.Equal(got, w) {
				t.Fatalf("round %d: %s reads back %d bytes, not what was written", round, name, len(got))
			}
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Release(m.Tensors["big"]); err != nil {
		t.Fatalf("release after close: %v", err)
	}
}
