package train

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// File names a run writes into its adapter folder.
const (
	MetricsFile = "metrics.json"  // validation history and the best checkpoint, rewritten as the run goes
	StreamFile  = "metrics.jsonl" // every event, one JSON line each, appended
)

// Metrics is metrics.json.
type Metrics struct {
	Method      Method       `json:"method"`
	Iters       int          `json:"iters"`
	Steps       int          `json:"steps"`
	Finished    bool         `json:"finished"`
	Cancelled   bool         `json:"cancelled"`
	Error       string       `json:"error,omitempty"`
	LastLoss    *float64     `json:"last_train_loss,omitempty"`
	Validation  []ValPoint   `json:"validation"`
	Checkpoints []Checkpoint `json:"checkpoints"`
	Best        *Checkpoint  `json:"best,omitempty"`
	Adapter     string       `json:"adapter,omitempty"` // the final adapter folder, once saved
}

// ValPoint is one validation.
type ValPoint struct {
	Step   int     `json:"step"`
	Loss   float64 `json:"val_loss"`
	Tokens int     `json:"val_tokens"`
}

// Checkpoint is one saved checkpoint; Path is relative to the adapter folder.
type Checkpoint struct {
	Step    int      `json:"step"`
	Path    string   `json:"path"`
	ValLoss *float64 `json:"val_loss,omitempty"`
}

// ReadMetrics reads an adapter folder's metrics.json.
func ReadMetrics(dir string) (*Metrics, error) {
	data, err := os.ReadFile(filepath.Join(dir, MetricsFile))
	if err != nil {
		return nil, err
	}
	m, err := ParseMetrics(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, MetricsFile), err)
	}
	return m, nil
}

// ParseMetrics reads metrics.json's bytes; the best checkpoint, when named,
// must carry its validation loss.
func ParseMetrics(data []byte) (*Metrics, error) {
	if len(data) > 64<<20 {
		return nil, fmt.Errorf("over 64 MiB")
	}
	m := &Metrics{}
	if err := json.Unmarshal(data, m); err != nil {
		return nil, err
	}
	if m.Best != nil && m.Best.ValLoss == nil {
		return nil, fmt.Errorf("the best checkpoint %q has no validation loss", m.Best.Path)
	}
	return m, nil
}

// addCheckpoint records a checkpoint and updates the best one.
func (m *Metrics) addCheckpoint(step int, path string, val float64, hasVal bool) {
	c := Checkpoint{Step: step, Path: path}
	if hasVal && !math.IsNaN(val) {
		c.ValLoss = &val
		if m.Best == nil || val < *m.Best.ValLoss {
			b := c
			m.Best = &b
		}
	}
	m.Checkpoints = append(m.Checkpoints, c)
}

// BestOf is the checkpoint of cs with the lowest validation loss, by the
// rule metrics.json's best follows (unvalidated ones never, the earlier
// of equals); nil when none was validated. A caller that joins saved
// states of its own (the app's segments of one run) asks here.
func BestOf(cs ...Checkpoint) *Checkpoint {
	var m Metrics
	for _, c := range cs {
		val, hasVal := math.NaN(), c.ValLoss != nil
		if hasVal {
			val = *c.ValLoss
		}
		m.addCheckpoint(c.Step, c.Path, val, hasVal)
	}
	return m.Best
}

// clone is a deep copy of m.
func (m *Metrics) clone() Metrics {
	c := *m
	c.Validation = append([]ValPoint(nil), m.Validation...)
	c.Checkpoints = append([]Checkpoint(nil), m.Checkpoints...)
	if m.Best != nil {
		b := *m.Best
		c.Best = &b
	}
	return c
}

// bestOfFinal makes the final adapter (path ".") the best when it was
// validated and no checkpoint did better.
func (m *Metrics) bestOfFinal() {
	n := len(m.Validation)
	if n == 0 || m.Validation[n-1].Step != m.Steps {
		return
	}
	v := m.Validation[n-1].Loss
	if math.IsNaN(v) || (m.Best != nil && *m.Best.ValLoss <= v) {
		return
	}
	m.Best = &Checkpoint{Step: m.Steps, Path: ".", ValLoss: &v}
}

// encode is metrics.json's bytes (a copy of m as it is now).
func (m *Metrics) encode() []byte {
	c := *m
	if c.Validation == nil {
		c.Validation = []ValPoint{}
	}
	if c.Checkpoints == nil {
		c.Checkpoints = []Checkpoint{}
	}
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil { // a NaN loss: keep the file valid JSON
		for i := range c.Validation {
			if math.IsNaN(c.Validation[i].Loss) || math.IsInf(c.Validation[i].Loss, 0) {
				c.Validation[i].Loss = -1
			}
		}
		c.LastLoss = nil
		b, _ = json.MarshalIndent(&c, "", "  ")
	}
	return append(b, '\n')
}

// stream appends event lines to the metrics stream.
type stream struct{ f *os.File }

func openStream(dir string) (*stream, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, StreamFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	if err := lockStream(f); err != nil {
		f.Close()
		return nil, err
	}
	return &stream{f}, nil
}

func (s *stream) write(line []byte) error {
	_, err := s.f.Write(append(line, '\n'))
	return err
}

func (s *stream) close() error {
	err := s.f.Sync()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return err
}
