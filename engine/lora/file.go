package lora

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"

	"perch/engine/gocpu"
	"perch/engine/regfile"
	"perch/engine/safetensors"
	"perch/internal/durable"
)

// maxWeightsBytes caps adapters.safetensors (a rank-64 adapter of every
// projection of the largest Gemma-4 is well under 2 GiB).
const maxWeightsBytes = 2 << 30

// Load reads an adapter folder written by Perch or mlx-lm. Both files are
// read through regfile: a FIFO or a device in their place is refused at
// once, and the caps count the bytes read.
func Load(dir string) (*Adapter, error) {
	loads.Add(1)
	raw, err := regfile.ReadFile(filepath.Join(dir, ConfigFile), maxConfigBytes)
	if err != nil {
		return nil, fmt.Errorf("adapter %s: %w", dir, err)
	}
	cfg, err := ParseConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("adapter %s: %w", dir, err)
	}
	path := filepath.Join(dir, WeightsFile)
	data, err := regfile.ReadFile(path, maxWeightsBytes)
	if err != nil {
		return nil, fmt.Errorf("adapter %s: %w", dir, err)
	}
	leaves, err := ParseWeights(data, path)
	if err != nil {
		return nil, fmt.Errorf("adapter %s: %w", dir, err)
	}
	return &Adapter{Config: cfg, Leaves: leaves}, nil
}

// ParseWeights decodes adapters.safetensors: 2-d float tensors (F32, BF16
// or F16), returned as float32. name is used in messages.
func ParseWeights(data []byte, name string) (map[string]Leaf, error) {
	f, err := safetensors.Parse(bytes.NewReader(data), int64(len(data)), name)
	if err != nil {
		return nil, err
	}
	if len(f.Tensors) == 0 {
		return nil, fmt.Errorf("%s holds no tensors", name)
	}
	out := make(map[string]Leaf, len(f.Tensors))
	for n, t := range f.Tensors {
		if len(t.Shape) != 2 {
			return nil, fmt.Errorf("%s: %s has shape %v; LoRA leaves are matrices", name, n, t.Shape)
		}
		b := data[t.Begin:t.End]
		v := make([]float32, t.Elements())
		switch t.DType {
		case "F32":
			for i := range v {
				v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			}
		case "BF16":
			for i := range v {
				v[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16)
			}
		case "F16":
			for i := range v {
				v[i] = gocpu.F16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
			}
		default:
			return nil, fmt.Errorf("%s: %s has dtype %s; LoRA leaves are F32, BF16 or F16", name, n, t.DType)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("%s: %s holds a NaN or infinite value", name, n)
			}
		}
		out[n] = Leaf{Shape: t.Shape, Data: v}
	}
	return out, nil
}

// Save writes dir/adapters.safetensors (float32) and dir/adapter_config.json,
// each to a temporary name, synced, then renamed over the old file, so a
// crash or a full disk leaves the previous files (or none) in place, never
// a torn one.
func (a *Adapter) Save(dir string) error {
	if err := a.Config.Validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save adapter: %w", err)
	}
	var ts []safetensors.Tensor
	for _, n := range a.Names() {
		l := a.Leaves[n]
		b := make([]byte, 4*len(l.Data))
		for i, x := range l.Data {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		ts = append(ts, safetensors.Tensor{Name: n, DType: "F32", Shape: l.Shape, Data: b})
	}
	cfg, err := a.Config.MarshalJSON()
	if err != nil {
		return fmt.Errorf("save adapter: %w", err)
	}
	if err := durable.Fill(filepath.Join(dir, WeightsFile), func(p string) error {
		return safetensors.Write(p, ts, map[string]string{"format": "mlx"})
	}); err != nil {
		return fmt.Errorf("save adapter %s: %w", filepath.Join(dir, WeightsFile), err)
	}
	if err := durable.WriteFile(filepath.Join(dir, ConfigFile), append(cfg, '\n'), 0o755); err != nil {
		return fmt.Errorf("save adapter %s: %w", filepath.Join(dir, ConfigFile), err)
	}
	return nil
}

// loads counts Load calls.
var loads atomic.Int64

// Loads is how many adapter folders Load has read in this process: walk
// tests count the reads one flow makes.
func Loads() int64 { return loads.Load() }
