package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"perch/engine/gocpu"
)

// GGUF value and tensor types (the format's published numbering).
const (
	ggufUint32  = 4
	ggufInt32   = 5
	ggufFloat32 = 6
	ggufBool    = 7
	ggufString  = 8
	ggufArray   = 9

	typeF32 = 0
	typeF16 = 1

	ggufAlign = 32
)

// kv is one metadata entry: a scalar (uint32, float32, bool, string) or a slice
// of uint32, int32, float32, bool or string.
type kv struct {
	key string
	val any
}

// tensor is one tensor's header; fill streams its values, row-major with
// dims[0] the fastest-moving index (GGUF's order).
type tensor struct {
	name string
	dims []uint64
	typ  uint32
	fill filler
}

// filler emits a tensor's n values in order.
type filler func(n uint64, emit func(float32))

func (t *tensor) numel() uint64 {
	n := uint64(1)
	for _, d := range t.dims {
		n *= d
	}
	return n
}

func (t *tensor) bytes() uint64 {
	if t.typ == typeF16 {
		return 2 * t.numel()
	}
	return 4 * t.numel()
}

func pad(n uint64) uint64 { return (n + ggufAlign - 1) / ggufAlign * ggufAlign }

// ggufWriter writes little-endian GGUF v3 and keeps the first error.
type ggufWriter struct {
	w   *bufio.Writer
	err error
	n   uint64
}

func (g *ggufWriter) raw(v any) {
	if g.err == nil {
		g.err = binary.Write(g.w, binary.LittleEndian, v)
		g.n += uint64(binary.Size(v))
	}
}

func (g *ggufWriter) str(s string) {
	g.raw(uint64(len(s)))
	if g.err == nil {
		_, g.err = g.w.WriteString(s)
		g.n += uint64(len(s))
	}
}

func (g *ggufWriter) value(v any) {
	switch x := v.(type) {
	case uint32:
		g.raw(uint32(ggufUint32))
		g.raw(x)
	case float32:
		g.raw(uint32(ggufFloat32))
		g.raw(x)
	case bool:
		g.raw(uint32(ggufBool))
		g.raw(x)
	case string:
		g.raw(uint32(ggufString))
		g.str(x)
	case []uint32:
		g.array(ggufUint32, len(x))
		g.raw(x)
	case []int32:
		g.array(ggufInt32, len(x))
		g.raw(x)
	case []float32:
		g.array(ggufFloat32, len(x))
		g.raw(x)
	case []bool:
		g.array(ggufBool, len(x))
		for _, b := range x {
			g.raw(b)
		}
	case []string:
		g.array(ggufString, len(x))
		for _, s := range x {
			g.str(s)
		}
	default:
		g.err = fmt.Errorf("gguf: no encoding for %T", v)
	}
}

func (g *ggufWriter) array(elem uint32, n int) {
	g.raw(uint32(ggufArray))
	g.raw(elem)
	g.raw(uint64(n))
}

// writeGGUF writes the header, the tensor table and the data.
func writeGGUF(out io.Writer, meta []kv, tensors []*tensor) error {
	g := &ggufWriter{w: bufio.NewWriterSize(out, 1<<20)}
	g.raw([]byte("GGUF"))
	g.raw(uint32(3))
	g.raw(uint64(len(tensors)))
	g.raw(uint64(len(meta)))
	for _, m := range meta {
		g.str(m.key)
		g.value(m.val)
	}
	off := uint64(0)
	for _, t := range tensors {
		g.str(t.name)
		g.raw(uint32(len(t.dims)))
		g.raw(t.dims)
		g.raw(t.typ)
		g.raw(off)
		off = pad(off + t.bytes())
	}
	g.zeros(pad(g.n) - g.n)
	for _, t := range tensors {
		start := g.n
		buf := make([]byte, 0, 1<<16)
		flush := func() {
			if g.err == nil {
				_, g.err = g.w.Write(buf)
				g.n += uint64(len(buf))
			}
			buf = buf[:0]
		}
		t.fill(t.numel(), func(v float32) {
			if t.typ == typeF16 {
				buf = binary.LittleEndian.AppendUint16(buf, gocpu.F32ToF16(v))
			} else {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			}
			if len(buf) >= 1<<16-4 {
				flush()
			}
		})
		flush()
		if g.err == nil && g.n-start != t.bytes() {
			return fmt.Errorf("gguf: %s wrote %d bytes, want %d", t.name, g.n-start, t.bytes())
		}
		g.zeros(pad(g.n) - g.n)
	}
	if g.err != nil {
		return g.err
	}
	return g.w.Flush()
}

func (g *ggufWriter) zeros(n uint64) {
	for ; n > 0; n-- {
		g.raw(uint8(0))
	}
}
