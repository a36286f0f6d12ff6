// Package npy reads and writes NumPy .npy files (format 1.0, little-endian,
// C order) for the dtypes media produces: float32, int32, uint8 and bool.
package npy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Array is an n-dimensional array; exactly one of the data slices is set.
type Array struct {
	Shape []int
	F32   []float32
	I32   []int32
	U8    []uint8
	Bool  []bool
}

func (a *Array) descr() (string, int) {
	switch {
	case a.F32 != nil:
		return "<f4", len(a.F32)
	case a.I32 != nil:
		return "<i4", len(a.I32)
	case a.Bool != nil:
		return "|b1", len(a.Bool)
	default:
		return "|u1", len(a.U8)
	}
}

// Write writes a as .npy to w.
func Write(w io.Writer, a *Array) error {
	descr, n := a.descr()
	count := 1
	dims := make([]string, len(a.Shape))
	for i, d := range a.Shape {
		count *= d
		dims[i] = strconv.Itoa(d)
	}
	if count != n {
		return fmt.Errorf("npy: shape %v holds %d values, data has %d", a.Shape, count, n)
	}
	shape := strings.Join(dims, ", ")
	if len(dims) == 1 {
		shape += ","
	}
	header := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape)
	pad := 64 - (10+len(header)+1)%64
	header += strings.Repeat(" ", pad%64) + "\n"
	buf := make([]byte, 0, 10+len(header))
	buf = append(buf, "\x93NUMPY\x01\x00"...)
	buf = binary.LittleEndian.AppendUint16(buf, uint16(len(header)))
	buf = append(buf, header...)
	if _, err := w.Write(buf); err != nil {
		return err
	}
	switch {
	case a.F32 != nil:
		return binary.Write(w, binary.LittleEndian, a.F32)
	case a.I32 != nil:
		return binary.Write(w, binary.LittleEndian, a.I32)
	case a.Bool != nil:
		b := make([]byte, len(a.Bool))
		for i, v := range a.Bool {
			if v {
				b[i] = 1
			}
		}
		_, err := w.Write(b)
		return err
	default:
		_, err := w.Write(a.U8)
		return err
	}
}

// WriteFile writes a to path.
func WriteFile(path string, a *Array) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := Write(f, a); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

var (
	descrRe = regexp.MustCompile(`'descr':\s*'([^']*)'`)
	fortRe  = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	shapeRe = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

// MaxBytes bounds the data size Read accepts.
const MaxBytes = 1 << 30

// Read parses an .npy file from b.
func Read(b []byte) (*Array, error) {
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		return nil, errors.New("npy: not an .npy file")
	}
	var hlen, off int
	switch b[6] {
	case 1:
		hlen, off = int(binary.LittleEndian.Uint16(b[8:])), 10
	case 2, 3:
		if len(b) < 12 {
			return nil, errors.New("npy: truncated header")
		}
		hlen, off = int(binary.LittleEndian.Uint32(b[8:])), 12
	default:
		return nil, fmt.Errorf("npy: unsupported version %d", b[6])
	}
	if hlen > len(b)-off {
		return nil, errors.New("npy: truncated header")
	}
	h := string(b[off : off+hlen])
	data := b[off+hlen:]
	d, f, s := descrRe.FindStringSubmatch(h), fortRe.FindStringSubmatch(h), shapeRe.FindStringSubmatch(h)
	if d == nil || f == nil || s == nil {
		return nil, fmt.Errorf("npy: bad header %q", h)
	}
	if f[1] == "True" {
		return nil, errors.New("npy: fortran order is not supported")
	}
	a := &Array{}
	count := 1
	for _, part := range strings.Split(s[1], ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 || n > MaxBytes {
			return nil, fmt.Errorf("npy: bad shape %q", s[1])
		}
		count *= n
		if count > MaxBytes {
			return nil, errors.New("npy: array too large")
		}
		a.Shape = append(a.Shape, n)
	}
	size := map[string]int{"<f4": 4, "<i4": 4, "|u1": 1, "|b1": 1, "<u1": 1}[d[1]]
	if size == 0 {
		return nil, fmt.Errorf("npy: unsupported dtype %q", d[1])
	}
	if len(data) != count*size {
		return nil, fmt.Errorf("npy: %d data bytes for shape %v of %s", len(data), a.Shape, d[1])
	}
	switch d[1] {
	case "<f4":
		a.F32 = make([]float32, count)
		for i := range a.F32 {
			a.F32[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
	case "<i4":
		a.I32 = make([]int32, count)
		for i := range a.I32 {
			a.I32[i] = int32(binary.LittleEndian.Uint32(data[4*i:]))
		}
	case "|b1":
		a.Bool = make([]bool, count)
		for i, v := range data {
			a.Bool[i] = v != 0
		}
	default:
		a.U8 = append([]uint8{}, data...)
	}
	return a, nil
}

// ReadFile reads an .npy file.
func ReadFile(path string) (*Array, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Read(b)
}
