package safetensors

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func f32bytes(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func writeTemp(t *testing.T, tensors []Tensor) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "m.safetensors")
	if err := Write(p, tensors, map[string]string{"format": "mlx"}); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRoundTrip(t *testing.T) {
	p := writeTemp(t, []Tensor{
		{Name: "b", DType: "F32", Shape: []int{2}, Data: f32bytes(3, 4)},
		{Name: "a", DType: "F32", Shape: []int{1, 2}, Data: f32bytes(1, 2)},
	})
	m, err := Map(p)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if got := m.Names(); strings.Join(got, ",") != "a,b" {
		t.Fatalf("names %v", got)
	}
	if !bytes.Equal(m.Bytes(m.Tensors["b"]), f32bytes(3, 4)) {
		t.Fatal("tensor b bytes differ")
	}
	if m.Metadata["format"] != "mlx" || m.Tensors["a"].Elements() != 2 {
		t.Fatalf("metadata %v, a %+v", m.Metadata, m.Tensors["a"])
	}
}

// rawFile builds a file from a literal header and n data bytes; the length
// field says claim, or the header's true length when claim is 0.
func rawFile(header string, n int, claim uint64) []byte {
	var b bytes.Buffer
	if claim == 0 {
		claim = uint64(len(header))
	}
	binary.Write(&b, binary.LittleEndian, claim)
	b.WriteString(header)
	b.Write(make([]byte, n))
	return b.Bytes()
}

func TestHostileHeaders(t *testing.T) {
	ok := `{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`
	cases := []struct {
		name string
		file []byte
		want string
	}{
		{"short", []byte{1, 2, 3}, "shorter than"},
		{"claims 100 GB", rawFile(ok, 8, 100<<30), "over the"},
		{"truncated header", rawFile(ok, 0, uint64(len(ok)+100)), "truncated"},
		{"truncated data", rawFile(ok, 4, uint64(len(ok))), "outside"},
		{"not json", rawFile("{nope", 0, 5), "not a JSON object"},
		{"overlap", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, 12, 0), "overlap"},
		{"dtype/shape", rawFile(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, 8, 0), "needs 12 bytes"},
		{"bad dtype", rawFile(`{"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}}`, 8, 0), "unknown dtype"},
		{"negative dim", rawFile(`{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, 8, 0), "impossible"},
		{"huge shape", rawFile(`{"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}}`, 8, 0), "impossible"},
		{"offsets reversed", rawFile(`{"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}}`, 8, 0), "outside"},
		{"bad metadata", rawFile(`{"__metadata__":{"a":1}}`, 0, 0), "__metadata__"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := c.file
			_, err := Parse(bytes.NewReader(f), int64(len(f)), "m.safetensors")
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "m.safetensors") {
				t.Fatalf("error %v, want one naming the file and containing %q", err, c.want)
			}
		})
	}
}

func TestReadHeaderMissingFile(t *testing.T) {
	_, err := ReadHeader(filepath.Join(t.TempDir(), "none.safetensors"))
	if !os.IsNotExist(err) {
		t.Fatalf("want not-exist error, got %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(rawFile(`{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, 8, 0))
	f.Add(rawFile(`{"__metadata__":{"format":"mlx"},"w":{"dtype":"U32","shape":[2,1],"data_offsets":[0,8]}}`, 8, 0))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(bytes.NewReader(b), int64(len(b)), "fuzz")
		if err != nil {
			return
		}
		for _, ti := range m.Tensors {
			if ti.Begin < m.DataOffset || ti.End > int64(len(b)) || ti.Begin > ti.End {
				t.Fatalf("accepted out-of-range tensor %+v in %d bytes", ti, len(b))
			}
		}
	})
}
