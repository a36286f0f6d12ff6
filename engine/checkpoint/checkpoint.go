// Package checkpoint opens a model folder's safetensors shards (one file, or
// several named by model.safetensors.index.json), validates every header,
// and hands out tensors by name to a backend, remembering which names were
// used so that unknown tensors can be reported.
package checkpoint

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"perch/engine/safetensors"
	"perch/engine/tensor"
)

// IndexFile and SingleFile are the standard names.
const (
	IndexFile  = "model.safetensors.index.json"
	SingleFile = "model.safetensors"
)

// maxIndexBytes caps the index JSON (real ones are ~100 KB).
const maxIndexBytes = 64 << 20

type entry struct {
	file *safetensors.Mapped
	info safetensors.TensorInfo
}

// Checkpoint is an open set of shards.
type Checkpoint struct {
	Dir     string
	files   []*safetensors.Mapped
	tensors map[string]entry
	used    map[string]bool
}

// Open validates and maps every shard of dir.
func Open(dir string) (*Checkpoint, error) {
	shards, err := Shards(dir)
	if err != nil {
		return nil, err
	}
	c := &Checkpoint{Dir: dir, tensors: map[string]entry{}, used: map[string]bool{}}
	for _, name := range shards {
		m, err := safetensors.Map(filepath.Join(dir, name))
		if err != nil {
			c.Close()
			return nil, err
		}
		c.files = append(c.files, m)
		for tn, info := range m.Tensors {
			if prev, dup := c.tensors[tn]; dup {
				c.Close()
				return nil, fmt.Errorf("tensor %q is in both %s and %s", tn, filepath.Base(prev.file.Path), name)
			}
			c.tensors[tn] = entry{m, info}
		}
	}
	return c, nil
}

// Shards reads the index (if any) and returns the shard file names.
func Shards(dir string) ([]string, error) {
	idxPath := filepath.Join(dir, IndexFile)
	data, err := os.ReadFile(idxPath)
	if os.IsNotExist(err) {
		if _, err := os.Stat(filepath.Join(dir, SingleFile)); err != nil {
			return nil, fmt.Errorf("%s has neither %s nor %s", dir, IndexFile, SingleFile)
		}
		return []string{SingleFile}, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseIndex(data, idxPath)
}

// ParseIndex returns the distinct shard names of an index, each checked to be
// a plain file name in the model folder.
func ParseIndex(data []byte, name string) ([]string, error) {
	if len(data) > maxIndexBytes {
		return nil, fmt.Errorf("%s: %d bytes, over the %d-byte limit", name, len(data), maxIndexBytes)
	}
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("%s: not a safetensors index: %w", name, err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, fmt.Errorf("%s: weight_map is empty", name)
	}
	seen := map[string]bool{}
	var shards []string
	for tn, f := range idx.WeightMap {
		if f == "" || f != filepath.Base(f) || strings.ContainsAny(f, "/\\\x00") || f == "." || f == ".." || !strings.HasSuffix(f, ".safetensors") {
			return nil, fmt.Errorf("%s: tensor %q points at %q, which is not a safetensors file in the model folder", name, tn, f)
		}
		if !seen[f] {
			seen[f] = true
			shards = append(shards, f)
		}
	}
	sort.Strings(shards)
	return shards, nil
}

// Has reports whether the checkpoint holds name.
func (c *Checkpoint) Has(name string) bool { _, ok := c.tensors[name]; return ok }

// Info returns a tensor's header entry.
func (c *Checkpoint) Info(name string) (safetensors.TensorInfo, bool) {
	e, ok := c.tensors[name]
	return e.info, ok
}

// Tensor loads name onto b, checking its shape when want is not nil (-1
// matches any size).
func (c *Checkpoint) Tensor(b tensor.Backend, name string, want ...int) (tensor.Tensor, error) {
	e, ok := c.tensors[name]
	if !ok {
		return nil, fmt.Errorf("checkpoint %s is missing tensor %q", c.Dir, name)
	}
	if want != nil && !shapeMatches(e.info.Shape, want) {
		return nil, fmt.Errorf("%s: tensor %q has shape %v, the config needs %v", filepath.Base(e.file.Path), name, e.info.Shape, want)
	}
	dt, ok := tensor.ParseDType(e.info.DType)
	if !ok {
		return nil, fmt.Errorf("%s: tensor %q has dtype %s, which the model cannot use", filepath.Base(e.file.Path), name, e.info.DType)
	}
	c.used[name] = true
	t := b.FromBytes(e.file.Bytes(e.info), dt, e.info.Shape)
	if err := b.Err(); err != nil {
		return nil, fmt.Errorf("%s: tensor %q: %w", filepath.Base(e.file.Path), name, err)
	}
	b.Pin(t)
	if tensor.CopiesBytes(b) {
		// The backend holds its own copy: without this the file pages the
		// copy read stay resident too, doubling the weights' memory. A
		// failure only costs memory, so it does not fail the load.
		_ = e.file.Release(e.info)
	}
	return t, nil
}

func shapeMatches(got, want []int) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if want[i] >= 0 && got[i] != want[i] {
			return false
		}
	}
	return true
}

// Skip marks names as deliberately unused (e.g. K/V projections of shared layers).
func (c *Checkpoint) Skip(names ...string) {
	for _, n := range names {
		if c.Has(n) {
			c.used[n] = true
		}
	}
}

// Unused lists tensors nothing asked for, sorted.
func (c *Checkpoint) Unused() []string {
	var out []string
	for n := range c.tensors {
		if !c.used[n] {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Names lists every tensor name, sorted.
func (c *Checkpoint) Names() []string {
	out := make([]string, 0, len(c.tensors))
	for n := range c.tensors {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Bytes is the total tensor payload.
func (c *Checkpoint) Bytes() int64 {
	var n int64
	for _, e := range c.tensors {
		n += e.info.End - e.info.Begin
	}
	return n
}

// Close unmaps every shard. Tensors a backend aliased become invalid.
func (c *Checkpoint) Close() error {
	var first error
	for _, f := range c.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	c.files = nil
	return first
}
