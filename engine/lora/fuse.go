package lora

import (
	"encoding/binary"
	"fmt"
	"math"

	"perch/engine/gocpu"
)

// Fusing an adapter into its base weights, as mlx-lm's LoRALinear.fuse:
// W' = W + scale·Bᵀ·Aᵀ ([Out, In]), the update rounded to W's dtype before
// the add. A quantized W (MLX affine, 4 or 8 bits) is dequantized, fused
// and quantized again with the same bits and group size by MLX's affine
// algorithm (mlx-lm's default; its --dequantize is not offered), so the
// fused model keeps the base's size; the requantization adds at most half
// a quantization step per weight.

// Delta is scale·Bᵀ·Aᵀ for a [In, r] and b [r, Out]: [Out, In], float32.
func Delta(a, b Leaf, scale float64) []float32 {
	in, r, out := a.Shape[0], a.Shape[1], b.Shape[1]
	d := make([]float32, out*in)
	s := float32(scale)
	for o := 0; o < out; o++ {
		row := d[o*in : (o+1)*in]
		for k := 0; k < r; k++ {
			bk := s * b.Data[k*out+o]
			for i := range row {
				row[i] += bk * a.Data[i*r+k]
			}
		}
	}
	return d
}

// fuseDense adds d to the [Out, In] weight raw of dtype dt ("F32", "BF16",
// "F16") and returns the new bytes.
func fuseDense(raw []byte, dt string, d []float32) ([]byte, error) {
	out := make([]byte, len(raw))
	switch dt {
	case "F32":
		if len(raw) != 4*len(d) {
			return nil, fmt.Errorf("%d bytes for %d weights", len(raw), len(d))
		}
		for i, x := range d {
			w := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(w+x))
		}
	case "BF16", "F16":
		if len(raw) != 2*len(d) {
			return nil, fmt.Errorf("%d bytes for %d weights", len(raw), len(d))
		}
		for i, x := range d {
			w := half(binary.LittleEndian.Uint16(raw[2*i:]), dt)
			binary.LittleEndian.PutUint16(out[2*i:], toHalf(w+round(x, dt), dt))
		}
	default:
		return nil, fmt.Errorf("dtype %s cannot be fused", dt)
	}
	return out, nil
}

func half(h uint16, dt string) float32 {
	if dt == "F16" {
		return gocpu.F16ToF32(h)
	}
	return math.Float32frombits(uint32(h) << 16)
}

func toHalf(f float32, dt string) uint16 {
	if dt == "F16" {
		return gocpu.F32ToF16(f)
	}
	return uint16(math.Float32bits(gocpu.RoundBF16(f)) >> 16)
}

// round rounds f to dt's precision (identity for F32).
func round(f float32, dt string) float32 {
	if dt == "F32" {
		return f
	}
	return half(toHalf(f, dt), dt)
}

// quantized is an MLX-affine matrix: packed words, scales and biases
// (stored as sdt: "F32", "BF16" or "F16").
type quantized struct {
	words          []uint32
	scales, biases []float32
	bits, group    int
	out, in        int
	sdt            string
}

// dequantize returns the [Out, In] float32 weights q·s + b.
func (q *quantized) dequantize() []float32 {
	per := 32 / q.bits
	mask := uint32(1)<<q.bits - 1
	w := make([]float32, q.out*q.in)
	gpr := q.in / q.group
	for o := 0; o < q.out; o++ {
		for i := 0; i < q.in; i++ {
			word := q.words[(o*q.in+i)/per]
			v := word >> (uint(i%per) * uint(q.bits)) & mask
			g := o*gpr + i/q.group
			w[o*q.in+i] = float32(v)*q.scales[g] + q.biases[g]
		}
	}
	return w
}

// quantize replaces q's words, scales and biases with MLX's affine
// quantization of w: per group, the larger-magnitude end is an exact
// level (scale = edge/q0), levels 0..2^bits−1, round half to even; scales
// and biases rounded to q.sdt.
func (q *quantized) quantize(w []float32) {
	nbins := float32(int(1)<<q.bits - 1)
	per := 32 / q.bits
	for i := range q.words {
		q.words[i] = 0
	}
	for g := 0; g < len(q.scales); g++ {
		vals := w[g*q.group : (g+1)*q.group]
		lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
		for _, v := range vals {
			lo, hi = min(lo, v), max(hi, v)
		}
		useMin := abs32(lo) > abs32(hi)
		scale := max((hi-lo)/nbins, 1e-7)
		edge := hi
		if useMin {
			edge = lo
		} else {
			scale = -scale
		}
		var bias float32
		if q0 := float32(math.RoundToEven(float64(edge / scale))); q0 != 0 {
			scale, bias = edge/q0, edge
		}
		scale, bias = round(scale, q.sdt), round(bias, q.sdt)
		q.scales[g], q.biases[g] = scale, bias
		for j, v := range vals {
			x := float32(math.RoundToEven(float64((v - bias) / scale)))
			x = min(max(x, 0), nbins)
			idx := g*q.group + j
			q.words[idx/per] |= uint32(x) << (uint(idx%per) * uint(q.bits))
		}
	}
}

func abs32(f float32) float32 { return float32(math.Abs(float64(f))) }
