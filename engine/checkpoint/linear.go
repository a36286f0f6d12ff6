package checkpoint

import (
	"fmt"

	"perch/engine/tensor"
)

// Quantization says how a module may be quantized, from config.json.
type Quantization struct {
	Bits, GroupSize int
}

// Linear loads prefix.weight (and, when prefix.scales exists, the MLX affine
// triple) as a [out, in] matrix, or [experts, out, in] when experts > 0. A
// module is quantized iff prefix.scales exists; bits and group size are
// derived from the shapes and must agree with q when q says anything.
func (c *Checkpoint) Linear(b tensor.Backend, prefix string, experts, out, in int, q *Quantization) (*tensor.Linear, error) {
	lead := []int{}
	if experts > 0 {
		lead = []int{experts}
	}
	l := &tensor.Linear{In: in, Out: out}
	if !c.Has(prefix + ".scales") {
		w, err := c.Tensor(b, prefix+".weight", append(lead, out, in)...)
		if err != nil {
			return nil, err
		}
		l.W = w
		return l, c.bias(b, prefix, l)
	}
	wi, ok := c.Info(prefix + ".weight")
	si, _ := c.Info(prefix + ".scales")
	if !ok {
		return nil, fmt.Errorf("checkpoint %s is missing tensor %q (its .scales exist)", c.Dir, prefix+".weight")
	}
	if len(wi.Shape) != len(lead)+2 || len(si.Shape) != len(lead)+2 || wi.DType != "U32" {
		return nil, fmt.Errorf("tensor %q: quantized weight %s %v / scales %v do not look like MLX affine quantization", prefix, wi.DType, wi.Shape, si.Shape)
	}
	packed, groups := wi.Shape[len(wi.Shape)-1], si.Shape[len(si.Shape)-1]
	if groups == 0 || in%groups != 0 || (32*packed)%in != 0 {
		return nil, fmt.Errorf("tensor %q: packed width %d and %d groups do not fit in=%d", prefix, packed, groups, in)
	}
	l.Bits, l.GroupSize = 32*packed/in, in/groups
	if l.Bits != 4 && l.Bits != 8 {
		return nil, fmt.Errorf("tensor %q: %d-bit quantization is not supported (4 or 8)", prefix, l.Bits)
	}
	if q != nil && q.Bits != 0 && (q.Bits != l.Bits || q.GroupSize != l.GroupSize) {
		return nil, fmt.Errorf("tensor %q is %d-bit group %d but config.json says %d-bit group %d", prefix, l.Bits, l.GroupSize, q.Bits, q.GroupSize)
	}
	var err error
	if l.W, err = c.Tensor(b, prefix+".weight", append(lead, out, packed)...); err != nil {
		return nil, err
	}
	if l.Scales, err = c.Tensor(b, prefix+".scales", append(lead, out, groups)...); err != nil {
		return nil, err
	}
	if l.Biases, err = c.Tensor(b, prefix+".biases", append(lead, out, groups)...); err != nil {
		return nil, err
	}
	return l, c.bias(b, prefix, l)
}

func (c *Checkpoint) bias(b tensor.Backend, prefix string, l *tensor.Linear) error {
	if !c.Has(prefix + ".bias") {
		return nil
	}
	t, err := c.Tensor(b, prefix+".bias", -1)
	l.Bias = t
	return err
}
