package lora

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"perch/engine/gemma4"
	"perch/engine/regfile"
	"perch/engine/safetensors"
)

// FuseOptions choose what happens to quantized projections.
type FuseOptions struct {
	// Dequantize writes fused quantized projections dense (in their scales'
	// dtype) and marks them unquantized in config.json ("<key>": false in
	// quantization, as mlx-lm reads it): exact, but those projections take
	// 4 (8-bit: 2) times the bytes. Otherwise they are requantized with the
	// same bits and group size (mlx-lm fuse's default).
	Dequantize bool
	// Text is the base model's text stack (shapes only are read): the
	// adapter must Match it, as a request's adapter must. Required.
	Text *gemma4.Text
}

// FuseDir writes a new model folder dst: src's files, with every
// projection the adapter adapts fused (dense weights in their own dtype;
// quantized ones dequantized, fused, and requantized unless
// opts.Dequantize). dst must not exist; the folder is built under a
// temporary name and renamed when complete. It returns the number of
// fused projections.
func FuseDir(src, dst string, ad *Adapter, opts FuseOptions) (int, error) {
	if err := ad.Config.Validate(); err != nil {
		return 0, err
	}
	if opts.Text == nil {
		return 0, errors.New("fuse: the base model's text stack is needed to check the adapter")
	}
	if _, _, err := ad.Match(opts.Text); err != nil {
		return 0, fmt.Errorf("fuse: the adapter does not fit this model: %w", err)
	}
	if _, err := os.Lstat(dst); err == nil {
		return 0, fmt.Errorf("fuse: %s already exists", dst)
	}
	if err := outsideBase(src, dst); err != nil {
		return 0, err
	}
	shards, err := filepath.Glob(filepath.Join(src, "*.safetensors"))
	if err != nil || len(shards) == 0 {
		return 0, fmt.Errorf("fuse: %s holds no safetensors files", src)
	}
	var maps []*safetensors.Mapped
	defer func() {
		for _, m := range maps {
			m.Close()
		}
	}()
	where := map[string]int{}
	for i, p := range shards {
		m, err := safetensors.Map(p)
		if err != nil {
			return 0, err
		}
		maps = append(maps, m)
		for n := range m.Tensors {
			where[n] = i
		}
	}
	has := func(n string) bool { _, ok := where[n]; return ok }
	prefix := gemma4.TextPrefix(has)
	f := &fuser{ad: ad, prefix: prefix, has: has, dequantize: opts.Dequantize, get: func(n string) (safetensors.TensorInfo, []byte) {
		m := maps[where[n]]
		return m.Tensors[n], m.Bytes(m.Tensors[n])
	}}
	n, err := f.run()
	if err != nil {
		return 0, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dst)), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return 0, fmt.Errorf("fuse: %w", err)
	}
	fail := func(err error) (int, error) { os.RemoveAll(tmp); return 0, fmt.Errorf("fuse: %w", err) }
	for i, p := range shards {
		var ts []safetensors.Tensor
		for _, n := range maps[i].Names() {
			ti := maps[i].Tensors[n]
			t := safetensors.Tensor{Name: n, DType: ti.DType, Shape: ti.Shape, Data: maps[i].Bytes(ti)}
			if f.dropped[n] {
				continue
			}
			if r, ok := f.out[n]; ok {
				t = r
			}
			ts = append(ts, t)
		}
		if err := safetensors.Write(filepath.Join(tmp, filepath.Base(p)), ts, maps[i].Metadata); err != nil {
			return fail(err)
		}
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return fail(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".safetensors") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		// A Hugging Face snapshot's files are symlinks into blobs/: follow them.
		if st, err := os.Stat(filepath.Join(src, e.Name())); err != nil || !st.Mode().IsRegular() {
			continue
		}
		var err error
		switch e.Name() {
		case gemma4.ConfigFile:
			err = f.rewriteConfig(filepath.Join(src, e.Name()), filepath.Join(tmp, e.Name()))
		case "model.safetensors.index.json":
			err = f.rewriteIndex(filepath.Join(src, e.Name()), filepath.Join(tmp, e.Name()))
		default:
			err = copyFile(filepath.Join(src, e.Name()), filepath.Join(tmp, e.Name()))
		}
		if err != nil {
			return fail(err)
		}
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fail(err)
	}
	return n, nil
}

// fuser computes the fused tensors of an adapter.
type fuser struct {
	ad         *Adapter
	prefix     string
	has        func(string) bool
	get        func(string) (safetensors.TensorInfo, []byte)
	dequantize bool

	out     map[string]safetensors.Tensor // replaced tensors by name
	dropped map[string]bool               // scales and biases of dequantized projections
	dense   []string                      // module keys made dense
}

// run fuses every leaf pair and returns the number of projections.
func (f *fuser) run() (int, error) {
	pairs := map[[2]string][2]*Leaf{}
	for name, l := range f.ad.Leaves {
		k, ok := leafKey(name)
		if !ok {
			return 0, fmt.Errorf("%s: tensor %q is not a LoRA leaf", WeightsFile, name)
		}
		p := pairs[[2]string{k[0], k[1]}]
		l := l
		if k[2] == "a" {
			p[0] = &l
		} else {
			p[1] = &l
		}
		pairs[[2]string{k[0], k[1]}] = p
	}
	f.out, f.dropped = map[string]safetensors.Tensor{}, map[string]bool{}
	for k, p := range pairs {
		if err := f.fuse(f.prefix+"layers."+k[0]+"."+k[1], k[1], p); err != nil {
			return 0, err
		}
	}
	return len(pairs), nil
}

func (f *fuser) fuse(key, module string, p [2]*Leaf) error {
	if p[0] == nil || p[1] == nil {
		return fmt.Errorf("%s: %s has only one of lora_a and lora_b", WeightsFile, key)
	}
	if len(p[0].Shape) != 2 || len(p[1].Shape) != 2 || p[0].Shape[1] != p[1].Shape[0] {
		return fmt.Errorf("%s: %s: leaves %v and %v do not form a low-rank update", WeightsFile, key, p[0].Shape, p[1].Shape)
	}
	in, out := p[0].Shape[0], p[1].Shape[1]
	if !f.has(key + ".weight") {
		return fmt.Errorf("fuse: the model has no %s.weight for the adapter's %s leaves", key, module)
	}
	d := Delta(*p[0], *p[1], f.ad.Config.LoRA.Scale)
	for _, x := range d {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) || math.Abs(float64(x)) > maxHalf(wi(f, key).DType) {
			return fmt.Errorf("fuse: %s: the update (scale %v) has values no %s weight can hold: the adapter is broken", key, f.ad.Config.LoRA.Scale, wi(f, key).DType)
		}
	}
	wi, wraw := f.get(key + ".weight")
	if !f.has(key + ".scales") {
		if len(wi.Shape) != 2 || wi.Shape[0] != out || wi.Shape[1] != in {
			return fmt.Errorf("fuse: %s.weight is %v, the adapter needs [%d %d]", key, wi.Shape, out, in)
		}
		b, err := fuseDense(wraw, wi.DType, d)
		if err != nil {
			return fmt.Errorf("fuse: %s: %w", key, err)
		}
		f.out[key+".weight"] = safetensors.Tensor{Name: key + ".weight", DType: wi.DType, Shape: wi.Shape, Data: b}
		return nil
	}
	q, err := readQuantized(key, in, out, f.get)
	if err != nil {
		return err
	}
	w := q.dequantize()
	for i := range w {
		w[i] = round(w[i]+round(d[i], q.sdt), q.sdt)
	}
	if f.dequantize {
		f.out[key+".weight"] = safetensors.Tensor{Name: key + ".weight", DType: q.sdt, Shape: []int{out, in}, Data: floatBytes(w, q.sdt)}
		f.dropped[key+".scales"], f.dropped[key+".biases"] = true, true
		f.dense = append(f.dense, key)
		return nil
	}
	q.quantize(w)
	si, _ := f.get(key + ".scales")
	f.out[key+".weight"] = safetensors.Tensor{Name: key + ".weight", DType: "U32", Shape: wi.Shape, Data: u32bytes(q.words)}
	f.out[key+".scales"] = safetensors.Tensor{Name: key + ".scales", DType: q.sdt, Shape: si.Shape, Data: floatBytes(q.scales, q.sdt)}
	f.out[key+".biases"] = safetensors.Tensor{Name: key + ".biases", DType: q.sdt, Shape: si.Shape, Data: floatBytes(q.biases, q.sdt)}
	return nil
}

// rewriteConfig copies config.json, marking the dense projections
// unquantized in "quantization" and "quantization_config".
func (f *fuser) rewriteConfig(src, dst string) error {
	if len(f.dense) == 0 {
		return copyFile(src, dst)
	}
	raw, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	for _, field := range []string{"quantization", "quantization_config"} {
		var q map[string]json.RawMessage
		if json.Unmarshal(doc[field], &q) != nil || q == nil {
			continue
		}
		for _, k := range f.dense {
			q[k] = json.RawMessage("false")
		}
		doc[field], _ = json.Marshal(q)
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(dst, out, 0o644)
}

// rewriteIndex copies the shard index without the dropped tensors.
func (f *fuser) rewriteIndex(src, dst string) error {
	if len(f.dropped) == 0 {
		return copyFile(src, dst)
	}
	raw, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	var wm map[string]string
	if err := json.Unmarshal(doc["weight_map"], &wm); err != nil {
		return fmt.Errorf("%s: weight_map: %w", src, err)
	}
	for n := range f.dropped {
		delete(wm, n)
	}
	doc["weight_map"], _ = json.Marshal(wm)
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(dst, out, 0o644)
}

func readQuantized(key string, in, out int, get func(string) (safetensors.TensorInfo, []byte)) (*quantized, error) {
	wi, wraw := get(key + ".weight")
	si, sraw := get(key + ".scales")
	bi, braw := get(key + ".biases")
	if len(wi.Shape) != 2 || len(si.Shape) != 2 || wi.DType != "U32" || wi.Shape[0] != out || si.Shape[0] != out ||
		si.Shape[1] == 0 || in%si.Shape[1] != 0 || bi.DType != si.DType || len(braw) != len(sraw) {
		return nil, fmt.Errorf("fuse: %s is not an MLX-affine quantized [%d %d] matrix (%v %v, scales %v)", key, out, in, wi.DType, wi.Shape, si.Shape)
	}
	q := &quantized{out: out, in: in, group: in / si.Shape[1], sdt: si.DType}
	if 32*wi.Shape[1]%in != 0 {
		return nil, fmt.Errorf("fuse: %s: packed width %d does not fit In %d", key, wi.Shape[1], in)
	}
	q.bits = 32 * wi.Shape[1] / in
	if q.bits != 4 && q.bits != 8 {
		return nil, fmt.Errorf("fuse: %s is %d-bit (4 or 8 supported)", key, q.bits)
	}
	q.words = make([]uint32, len(wraw)/4)
	for i := range q.words {
		q.words[i] = binary.LittleEndian.Uint32(wraw[4*i:])
	}
	var err error
	if q.scales, err = readFloats(sraw, si.DType); err != nil {
		return nil, fmt.Errorf("fuse: %s.scales: %w", key, err)
	}
	if q.biases, err = readFloats(braw, bi.DType); err != nil {
		return nil, fmt.Errorf("fuse: %s.biases: %w", key, err)
	}
	return q, nil
}

func readFloats(raw []byte, dt string) ([]float32, error) {
	switch dt {
	case "F32":
		v := make([]float32, len(raw)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return v, nil
	case "BF16", "F16":
		v := make([]float32, len(raw)/2)
		for i := range v {
			v[i] = half(binary.LittleEndian.Uint16(raw[2*i:]), dt)
		}
		return v, nil
	}
	return nil, errors.New("dtype " + strconv.Quote(dt) + " is not a float")
}

func floatBytes(v []float32, dt string) []byte {
	if dt == "F32" {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		return b
	}
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], toHalf(x, dt))
	}
	return b
}

func u32bytes(v []uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

// wi is key's weight entry.
func wi(f *fuser, key string) safetensors.TensorInfo { t, _ := f.get(key + ".weight"); return t }

// maxHalf is the largest finite value of a weight dtype (U32: a quantized
// weight, requantized in its scales' dtype; bounded as BF16).
func maxHalf(dt string) float64 {
	if dt == "F16" {
		return 65504
	}
	return math.MaxFloat32
}

// outsideBase refuses an output folder inside the base model's folder
// (symlinks resolved): it would become part of the model it is made from.
func outsideBase(src, dst string) error {
	base, err := filepath.EvalSymlinks(src)
	if err == nil {
		base, err = filepath.Abs(base)
	}
	parent, perr := filepath.Abs(filepath.Dir(filepath.Clean(dst)))
	if err != nil || perr != nil {
		return fmt.Errorf("fuse: %v %v", err, perr)
	}
	if p, err := filepath.EvalSymlinks(parent); err == nil {
		parent = p
	}
	out := filepath.Join(parent, filepath.Base(filepath.Clean(dst)))
	if rel, err := filepath.Rel(base, out); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("fuse: the output %s is inside the base model's folder %s: write it elsewhere", dst, src)
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := regfile.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
