package npy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	for _, a := range []*Array{
		{Shape: []int{2, 3}, F32: []float32{1, 2, 3, 4, 5, -6.5}},
		{Shape: []int{3}, I32: []int32{-1, 0, 7}},
		{Shape: []int{2, 2}, Bool: []bool{true, false, false, true}},
		{Shape: []int{1, 1, 3}, U8: []uint8{0, 128, 255}},
	} {
		var buf bytes.Buffer
		if err := Write(&buf, a); err != nil {
			t.Fatal(err)
		}
		if (buf.Len()-len(a.U8)-len(a.Bool))%16 != 0 && a.F32 == nil && a.I32 == nil {
			t.Errorf("header not aligned")
		}
		b, err := Read(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("round trip: %+v != %+v", a, b)
		}
	}
}

// TestNumpyReadsOurFiles checks the writer against numpy itself where it is installed.
func TestNumpyReadsOurFiles(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		t.Skip("numpy not installed (python3-numpy): skipping the cross-check")
	}
	p := filepath.Join(t.TempDir(), "a.npy")
	if err := WriteFile(p, &Array{Shape: []int{2, 2}, F32: []float32{1.5, 2, 3, 4}}); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, "-c", "import numpy,sys; a=numpy.load(sys.argv[1]); print(a.dtype, a.shape, a.sum())", p).CombinedOutput()
	if err != nil || string(out) != "float32 (2, 2) 10.5\n" {
		t.Fatalf("numpy says %q (%v)", out, err)
	}
	_ = os.Remove(p)
}

func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	Write(&buf, &Array{Shape: []int{2}, F32: []float32{1, 2}})
	f.Add(buf.Bytes())
	f.Add([]byte("\x93NUMPY\x01\x00\x20\x00{'descr': '<f4', 'shape': (99999999999,), }"))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := Read(b)
		if err == nil {
			n := len(a.F32) + len(a.I32) + len(a.U8) + len(a.Bool)
			if n > len(b) {
				t.Fatalf("%d values from %d bytes", n, len(b))
			}
		}
	})
}
