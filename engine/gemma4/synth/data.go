package synth

import (
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"sort"

	"perch/engine/safetensors"
)

// chunk is how many values a stream encodes per write.
const chunk = 1 << 16

// gen draws one value.
type gen func(r *rand.Rand) float32

func normal(mean, std float32) gen {
	return func(r *rand.Rand) float32 { return mean + std*float32(r.NormFloat64()) }
}

// encodeFloats writes n values of g as dt ("F32" or "BF16").
func encodeFloats(out io.Writer, dt string, n int, r *rand.Rand, g gen) error {
	size := 4
	if dt == "BF16" {
		size = 2
	}
	buf := make([]byte, size*min(n, chunk))
	for n > 0 {
		k := min(n, chunk)
		for i := 0; i < k; i++ {
			putFloat(buf[size*i:], dt, g(r))
		}
		if _, err := out.Write(buf[:size*k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

func putFloat(b []byte, dt string, x float32) {
	if dt == "BF16" {
		binary.LittleEndian.PutUint16(b, bf16(x))
		return
	}
	binary.LittleEndian.PutUint32(b, math.Float32bits(x))
}

// bf16 rounds to nearest even, as numpy/torch conversions do.
func bf16(x float32) uint16 {
	u := math.Float32bits(x)
	return uint16((u + 0x7fff + (u>>16)&1) >> 16)
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// floats adds a float tensor of g's values under the layout's name.
func (w *writer) floats(canonical string, g gen, shape ...int) {
	dt := w.floatDType()
	w.tensors = append(w.tensors, safetensors.Tensor{Name: w.stored(canonical), DType: dt, Shape: shape,
		Stream: func(out io.Writer) error { return encodeFloats(out, dt, numel(shape), w.rng(canonical), g) }})
}

// norm adds an RMSNorm weight near 1.
func (w *writer) norm(canonical string, n int) { w.floats(canonical, normal(1, 0.1), n) }

// weight adds a float weight of std Scale.
func (w *writer) weight(canonical string, shape ...int) {
	w.floats(canonical, normal(0, w.opt.Scale), shape...)
}

// scalar adds a 0-d float tensor.
func (w *writer) scalar(canonical string, v float32) {
	w.floats(canonical, func(*rand.Rand) float32 { return v })
}

// linear adds prefix.weight [lead..., out, in], quantized when the config
// says so for this module (the weight then packed into uint32 words with
// per-group scales and biases whose dequantized values have std Scale).
func (w *writer) linear(prefix string, experts, out, in int) {
	lead := []int{}
	if experts > 0 {
		lead = []int{experts}
	}
	bits := w.quantBits(prefix, in)
	if bits == 0 {
		w.weight(prefix+".weight", append(lead, out, in)...)
		return
	}
	levels := float32(int(1)<<bits - 1)
	step := w.opt.Scale * float32(math.Sqrt(12)) / levels // a uniform q·step has std Scale
	name := w.stored(prefix)
	shape := append(lead, out, in*bits/32)
	w.tensors = append(w.tensors, safetensors.Tensor{Name: name + ".weight", DType: "U32", Shape: shape,
		Stream: func(o io.Writer) error { return randomWords(o, numel(shape), w.rng(prefix+".weight")) }})
	groups := append(lead, out, in/w.opt.GroupSize)
	w.floats(prefix+".scales", normal(step, step/10), groups...)
	w.floats(prefix+".biases", normal(-levels/2*step, step), groups...)
}

func randomWords(out io.Writer, n int, r *rand.Rand) error {
	buf := make([]byte, 4*min(n, chunk))
	for n > 0 {
		k := min(n, chunk)
		for i := 0; i < k; i++ {
			binary.LittleEndian.PutUint32(buf[4*i:], r.Uint32())
		}
		if _, err := out.Write(buf[:4*k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// permuted adds a small float tensor drawn in canonical shape and stored
// transposed by perm (output axis i is input axis perm[i]).
func (w *writer) permuted(canonical string, shape []int, perm []int) {
	v := make([]float32, numel(shape))
	r, g := w.rng(canonical), normal(0, w.opt.Scale)
	for i := range v {
		v[i] = g(r)
	}
	outShape := make([]int, len(shape))
	for i, p := range perm {
		outShape[i] = shape[p]
	}
	t := transpose(v, shape, perm)
	dt := w.floatDType()
	size := map[string]int{"F32": 4, "BF16": 2}[dt]
	data := make([]byte, size*len(t))
	for i, x := range t {
		putFloat(data[size*i:], dt, x)
	}
	w.tensors = append(w.tensors, safetensors.Tensor{Name: w.stored(canonical), DType: dt, Shape: outShape, Data: data})
}

func transpose(v []float32, shape, perm []int) []float32 {
	n := len(shape)
	stride := make([]int, n)
	s := 1
	for i := n - 1; i >= 0; i-- {
		stride[i] = s
		s *= shape[i]
	}
	out := make([]float32, len(v))
	idx := make([]int, n)
	for o := range out {
		src := 0
		for i := range perm {
			src += idx[i] * stride[perm[i]]
		}
		out[o] = v[src]
		for i := n - 1; i >= 0; i-- { // next output index, last axis fastest
			idx[i]++
			if idx[i] < shape[perm[i]] {
				break
			}
			idx[i] = 0
		}
	}
	return out
}

func sortedByName(ts []safetensors.Tensor) []safetensors.Tensor {
	out := append([]safetensors.Tensor(nil), ts...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Quantize packs rows x in float weights into MLX affine form: per group,
// scale = (max-min)/(2^bits-1), bias = min, q = round((w-bias)/scale),
// packed low bits first.
func Quantize(v []float32, rows, in, bits, group int) (packed []uint32, scales, biases []float32) {
	per := 32 / bits
	levels := float32(int(1)<<bits - 1)
	packed = make([]uint32, rows*in/per)
	g := in / group
	scales, biases = make([]float32, rows*g), make([]float32, rows*g)
	for r := 0; r < rows; r++ {
		for k := 0; k < g; k++ {
			vals := v[r*in+k*group : r*in+(k+1)*group]
			lo, hi := vals[0], vals[0]
			for _, x := range vals {
				lo, hi = min(lo, x), max(hi, x)
			}
			s := (hi - lo) / levels
			if s == 0 {
				s = 1
			}
			scales[r*g+k], biases[r*g+k] = s, lo
			for j, x := range vals {
				q := uint32(math.Round(float64((x - lo) / s)))
				idx := r*in + k*group + j
				packed[idx/per] |= min(q, uint32(levels)) << (uint(idx%per) * uint(bits))
			}
		}
	}
	return packed, scales, biases
}
