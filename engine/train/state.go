package train

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"

	"perch/engine/lora"
	"perch/engine/regfile"
	"perch/engine/safetensors"

	"perch/internal/durable"
)

// ResumeFile is written beside every adapter a run saves (each checkpoint
// and the top of the adapter folder): everything continuing the run needs
// besides the data. It holds its own copy of the leaves, so it never
// depends on the adapter file next to it having been replaced too.
const ResumeFile = "resume.safetensors"

// maxResumeBytes caps a resume file: three copies of the largest adapter.
const maxResumeBytes = 3 * (2 << 30)

// Settings are what a run was started with. A continued run must be given
// the same (only Iters may grow), or it would not end where the
// uninterrupted run ends.
type Settings struct {
	Options   Options     `json:"options"`
	LoRA      lora.Config `json:"-"`
	MaxLen    int         `json:"max_len"`
	Iters     int         `json:"iters"`
	BatchSize int         `json:"batch_size"`
	ValEvery  int         `json:"val_every"`
	ValBtchs  int         `json:"val_batches"`
	SaveEvery int         `json:"save_every"`
	NoShuffle bool        `json:"no_shuffle"`
}

// Moments are a trainer's optimizer state: AdamW's moments per leaf, the
// updates done (the schedule's position) and the sequences run (dropout
// masks are drawn by sequence number).
type Moments struct {
	Names []string
	M, V  [][]float32
	Steps int
	Seqs  int
}

// State is a run at a step boundary.
type State struct {
	Step     int      // steps done
	Epoch    int      // the batcher: full passes so far,
	Pos      int      // rows dealt of this epoch,
	Order    []int    // and this epoch's row order
	Stream   int64    // bytes of metrics.jsonl written up to this state
	Data     string   // fingerprint of the training and validation rows
	Settings Settings // what the run was started with
	Metrics  Metrics  // metrics.json as of this state
	Adapter  *lora.Adapter
	Moments  Moments
}

// stateMeta is the part of State kept as JSON in the file's metadata.
type stateMeta struct {
	Version  int             `json:"version"`
	Step     int             `json:"step"`
	Epoch    int             `json:"epoch"`
	Pos      int             `json:"pos"`
	Order    []int           `json:"order"`
	Stream   int64           `json:"stream_bytes"`
	Data     string          `json:"data"`
	Settings Settings        `json:"settings"`
	LoRA     json.RawMessage `json:"adapter_config"`
	Metrics  Metrics         `json:"metrics"`
	Names    []string        `json:"leaves"`
	Updates  int             `json:"updates"`
	Seqs     int             `json:"sequences"`
}

// Save writes dir/resume.safetensors through a synced temporary file.
func (s *State) Save(dir string) error {
	cfg, err := s.Adapter.Config.MarshalJSON()
	if err != nil {
		return err
	}
	meta := stateMeta{Version: 1, Step: s.Step, Epoch: s.Epoch, Pos: s.Pos, Order: s.Order, Stream: s.Stream, Data: s.Data,
		Settings: s.Settings, LoRA: cfg, Metrics: s.Metrics, Names: s.Moments.Names, Updates: s.Moments.Steps, Seqs: s.Moments.Seqs}
	js, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	var ts []safetensors.Tensor
	for i, n := range s.Moments.Names {
		l := s.Adapter.Leaves[n]
		for _, t := range []struct {
			pre string
			v   []float32
		}{{"leaf.", l.Data}, {"adam_m.", s.Moments.M[i]}, {"adam_v.", s.Moments.V[i]}} {
			ts = append(ts, safetensors.Tensor{Name: t.pre + n, DType: "F32", Shape: l.Shape, Data: f32Bytes(t.v)})
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	kv := map[string]string{"perch_resume": string(js)}
	path := filepath.Join(dir, ResumeFile)
	if err := durable.Fill(path, func(tmp string) error { return safetensors.Write(tmp, ts, kv) }); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ReadState reads dir/resume.safetensors.
func ReadState(dir string) (*State, error) {
	path := filepath.Join(dir, ResumeFile)
	data, err := regfile.ReadFile(path, maxResumeBytes)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s has no %s: it is not a run Perch can continue (a run saves one at each checkpoint)", dir, ResumeFile)
		}
		return nil, err
	}
	f, err := safetensors.Parse(bytes.NewReader(data), int64(len(data)), path)
	if err != nil {
		return nil, err
	}
	var meta stateMeta
	if err := json.Unmarshal([]byte(f.Metadata["perch_resume"]), &meta); err != nil || meta.Version != 1 {
		return nil, fmt.Errorf("%s: no readable resume state (version %d): %v", path, meta.Version, err)
	}
	cfg, err := lora.ParseConfig(meta.LoRA)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s := &State{Step: meta.Step, Epoch: meta.Epoch, Pos: meta.Pos, Order: meta.Order, Stream: meta.Stream, Data: meta.Data,
		Settings: meta.Settings, Metrics: meta.Metrics, Adapter: &lora.Adapter{Config: cfg, Leaves: map[string]lora.Leaf{}},
		Moments: Moments{Names: meta.Names, Steps: meta.Updates, Seqs: meta.Seqs}}
	s.Settings.LoRA = cfg
	for _, n := range meta.Names {
		var v [3][]float32
		var shape []int
		for k, pre := range []string{"leaf.", "adam_m.", "adam_v."} {
			t, ok := f.Tensors[pre+n]
			if !ok || t.DType != "F32" {
				return nil, fmt.Errorf("%s: no F32 tensor %s%s", path, pre, n)
			}
			v[k], shape = f32s(data[t.Begin:t.End]), t.Shape
		}
		s.Adapter.Leaves[n] = lora.Leaf{Shape: shape, Data: v[0]}
		s.Moments.M, s.Moments.V = append(s.Moments.M, v[1]), append(s.Moments.V, v[2])
	}
	if len(f.Tensors) != 3*len(meta.Names) || s.Step < 0 || s.Pos < 0 || s.Pos > len(s.Order) {
		return nil, fmt.Errorf("%s: the resume state is inconsistent (%d tensors for %d leaves, step %d, row %d of %d)",
			path, len(f.Tensors), len(meta.Names), s.Step, s.Pos, len(s.Order))
	}
	return s, nil
}

// Differences lists the settings in which b differs from a (the saved
// ones), Iters aside.
func (a Settings) Differences(b Settings) []string {
	var out []string
	cmp := func(name string, x, y any) {
		if !reflect.DeepEqual(x, y) {
			out = append(out, fmt.Sprintf("%s %v (now %v)", name, x, y))
		}
	}
	ao, bo := a.Options, b.Options
	ao.NoRecompute, bo.NoRecompute = false, false // changes memory, not numbers
	cmp("training options", ao, bo)
	cmp("max sequence length", a.MaxLen, b.MaxLen)
	cmp("batch size", a.BatchSize, b.BatchSize)
	cmp("validation every", a.ValEvery, b.ValEvery)
	cmp("validation batches", a.ValBtchs, b.ValBtchs)
	cmp("checkpoint every", a.SaveEvery, b.SaveEvery)
	cmp("no-shuffle", a.NoShuffle, b.NoShuffle)
	ac, _ := a.LoRA.MarshalJSON()
	bc, _ := b.LoRA.MarshalJSON()
	cmp("adapter config", string(ac), string(bc))
	return out
}

// Fingerprint identifies the rows a run trains and validates on: their
// tokens, answer spans and media, in order.
func Fingerprint(trainRows, valid []Row) string {
	h := sha256.New()
	var b [8]byte
	put := func(v int) { binary.LittleEndian.PutUint64(b[:], uint64(v)); h.Write(b[:]) }
	ints := func(ids []int32) {
		put(len(ids))
		for _, id := range ids {
			put(int(id))
		}
	}
	for _, rows := range [][]Row{trainRows, valid} {
		put(len(rows))
		for i := range rows {
			r := &rows[i]
			ints(r.IDs)
			put(r.PromptLen)
			ints(r.Prompt)
			ints(r.Chosen)
			ints(r.Rejected)
			put(len(r.Media))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func f32s(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
