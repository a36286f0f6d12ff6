package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"perch/engine/gocpu"
)

func TestF16(t *testing.T) {
	for _, c := range []struct {
		in   float32
		want uint16
	}{
		{0, 0}, {1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {1e6, 0x7c00},
		{float32(math.Inf(-1)), 0xfc00}, {6.103515625e-05, 0x0400}, // smallest normal
		{5.960464477539063e-08, 0x0001}, {2.9e-08, 0}, // smallest subnormal; under half of it
		{1 + 1.0/2048, 0x3c00}, {1 + 3.0/2048, 0x3c02}, // ties to even
		{0.1, 0x2e66},
	} {
		if got := gocpu.F32ToF16(c.in); got != c.want {
			t.Errorf("f16(%g) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
}

func TestWriteGGUFLayout(t *testing.T) {
	var buf bytes.Buffer
	ts := []*tensor{
		{name: "a", dims: []uint64{3}, typ: typeF32, fill: func(n uint64, emit func(float32)) {
			for i := uint64(0); i < n; i++ {
				emit(float32(i))
			}
		}},
		{name: "b", dims: []uint64{2, 2}, typ: typeF16, fill: uniform(1, "b", 0, 1)},
	}
	if err := writeGGUF(&buf, []kv{{"k", uint32(7)}, {"flags", []bool{true, false}}}, ts); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if string(b[:4]) != "GGUF" || binary.LittleEndian.Uint32(b[4:]) != 3 ||
		binary.LittleEndian.Uint64(b[8:]) != 2 || binary.LittleEndian.Uint64(b[16:]) != 2 {
		t.Fatalf("header % x", b[:24])
	}
	// Data starts aligned: tensor a (12 bytes, padded to 32), then b (8 bytes, padded).
	if len(b)%ggufAlign != 0 {
		t.Fatalf("file length %d is not aligned", len(b))
	}
	data := b[len(b)-64:]
	for i := 0; i < 3; i++ {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:])); got != float32(i) {
			t.Errorf("a[%d] = %g", i, got)
		}
	}
}

func TestWriteGGUFShortFill(t *testing.T) {
	ts := []*tensor{{name: "a", dims: []uint64{4}, typ: typeF32, fill: func(uint64, func(float32)) {}}}
	if err := writeGGUF(&bytes.Buffer{}, nil, ts); err == nil {
		t.Fatal("a tensor that emits too few values was written without error")
	}
}
