package train

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// fakeStepper stands in for the Trainer to test the run loop alone: its
// "adapter" is the number of steps taken, its loss falls with each step.
type fakeStepper struct {
	steps   int
	batches [][]string // sources of each step's rows
	failAt  int        // Step fails at this step (0: never)
}

func (f *fakeStepper) Step(rows []Row) (StepMetrics, error) {
	f.steps++
	if f.steps == f.failAt {
		return StepMetrics{}, errors.New("backend out of memory")
	}
	var src []string
	for _, r := range rows {
		src = append(src, r.Source)
	}
	f.batches = append(f.batches, src)
	return StepMetrics{Loss: 10 / float64(f.steps), GradNorm: 1, Tokens: 3 * len(rows)}, nil
}

func (f *fakeStepper) Evaluate(rows []Row) (StepMetrics, error) {
	return StepMetrics{Loss: 5 / float64(f.steps+1), Tokens: 3 * len(rows)}, nil
}

func (f *fakeStepper) Snapshot() (Snapshot, error) { return fakeSnap(f.steps), nil }

// fakeSnap saves the step it was taken at.
type fakeSnap int

func (s fakeSnap) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "adapters.safetensors"), []byte(fmt.Sprint(int(s))), 0o644)
}

func fakeRows(n int) []Row {
	rows := make([]Row, n)
	for i := range rows {
		rows[i] = Row{IDs: []int32{2, 3, 4}, PromptLen: 1, Source: fmt.Sprintf("train.jsonl:%d", i+1)}
	}
	return rows
}

func savedStep(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "adapters.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func collect(evs *[]Event) Host { return Host{Emit: func(ev Event) { *evs = append(*evs, ev) }} }

func TestRunCheckpointsAndMetrics(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "adapter")
	var evs []Event
	f := &fakeStepper{}
	p := Plan{Method: SFT, Train: fakeRows(5), Valid: fakeRows(3), Iters: 10, BatchSize: 2, ValEvery: 2, SaveEvery: 4, AdapterDir: dir, NoShuffle: true}
	res, err := Run(context.Background(), f, p, collect(&evs))
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 10 || res.Cancelled || savedStep(t, dir) != "10" {
		t.Fatalf("result %+v, final adapter of step %s", res, savedStep(t, dir))
	}
	// File order, one stream through the epochs.
	if got := f.batches[2]; !slices.Equal(got, []string{"train.jsonl:5", "train.jsonl:1"}) {
		t.Errorf("batch 3 %v", got)
	}
	m, err := ReadMetrics(dir)
	if err != nil {
		t.Fatal(err)
	}
	var valSteps []int
	for _, v := range m.Validation {
		valSteps = append(valSteps, v.Step)
	}
	if !slices.Equal(valSteps, []int{0, 2, 4, 6, 8, 10}) || !m.Finished || m.Steps != 10 || m.Adapter != "." {
		t.Errorf("metrics.json %+v", m)
	}
	wantCk := []string{CheckpointName(4, 5.0/5, true), CheckpointName(8, 5.0/9, true)}
	// The final state, validated at 5/11, beats both checkpoints: it is the best.
	if len(m.Checkpoints) != 2 || m.Checkpoints[0].Path != filepath.Join("checkpoints", wantCk[0]) || m.Best == nil || m.Best.Step != 10 || m.Best.Path != "." {
		t.Errorf("checkpoints %+v best %+v", m.Checkpoints, m.Best)
	}
	for i, name := range wantCk {
		if got := savedStep(t, filepath.Join(dir, "checkpoints", name)); got != fmt.Sprint(4*(i+1)) {
			t.Errorf("%s holds step %s", name, got)
		}
	}
	if res.Best != dir {
		t.Errorf("best %q", res.Best)
	}
	if last := evs[len(evs)-1]; last.Kind != EventDone {
		t.Errorf("last event %+v", last)
	}
	// The stream has every event, the done line last.
	lines := streamLines(t, dir)
	if len(lines) != len(evs) || lines[len(lines)-1]["type"] != "done" || lines[0]["type"] != "started" {
		t.Errorf("%d stream lines for %d events; first %v last %v", len(lines), len(evs), lines[0], lines[len(lines)-1])
	}
	steps := 0
	for _, l := range lines {
		if l["type"] == "step" {
			steps++
		}
	}
	if steps != 10 {
		t.Errorf("%d step lines", steps)
	}
}

func streamLines(t *testing.T, dir string) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, StreamFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var v map[string]any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("stream line %q: %v", sc.Text(), err)
		}
		out = append(out, v)
	}
	return out
}

// TestFailedCheckpointFailsRun: a disk that fills up during the second
// checkpoint fails the run with an error naming it; the first checkpoint
// stays whole and no half-written folder is left.
func TestFailedCheckpointFailsRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "adapter")
	full := false
	h := Host{save: func(s Snapshot, d string) error {
		full = full || strings.HasPrefix(filepath.Base(d), ".step-00010")
		if full { // the disk stays full
			if strings.HasPrefix(filepath.Base(d), ".") { // a checkpoint's temporary folder (the top is replaced by rename)
				os.WriteFile(filepath.Join(d, "adapters.safetensors"), []byte("torn"), 0o644)
			}
			return &os.PathError{Op: "write", Path: filepath.Join(d, "adapters.safetensors"), Err: syscall.ENOSPC}
		}
		return s.Save(d)
	}}
	var evs []Event
	h.Emit = func(ev Event) { evs = append(evs, ev) }
	f := &fakeStepper{}
	p := Plan{Method: SFT, Train: fakeRows(4), Iters: 20, BatchSize: 2, SaveEvery: 5, AdapterDir: dir}
	_, err := Run(context.Background(), f, p, h)
	if err == nil || !strings.Contains(err.Error(), "checkpoint "+filepath.Join("checkpoints", "step-00010")) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err %v", err)
	}
	if got := savedStep(t, filepath.Join(dir, "checkpoints", "step-00005")); got != "5" {
		t.Errorf("first checkpoint holds %q", got)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "checkpoints"))
	if len(entries) != 1 {
		t.Errorf("checkpoints folder holds %v", entries)
	}
	if got := savedStep(t, dir); got != "5" {
		t.Errorf("the top-level adapter holds step %q, not the last good checkpoint's 5", got)
	}
	if !strings.Contains(err.Error(), "final adapter") {
		t.Errorf("the failed final save is not reported: %v", err)
	}
	if last := evs[len(evs)-1]; last.Kind != EventError {
		t.Errorf("last event %+v", last)
	}
	m, _ := ReadMetrics(dir)
	if m == nil || m.Finished || !strings.Contains(m.Error, "no space left") {
		t.Errorf("metrics.json %+v", m)
	}
}

// TestFinalSaveFailureFailsRun: no "done" while the final adapter is missing.
func TestFinalSaveFailureFailsRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "adapter")
	h := Host{save: func(Snapshot, string) error { return syscall.EROFS }}
	_, err := Run(context.Background(), &fakeStepper{}, Plan{Method: SFT, Train: fakeRows(2), Iters: 2, BatchSize: 1, AdapterDir: dir}, h)
	if err == nil || !strings.Contains(err.Error(), "final adapter "+dir) {
		t.Fatalf("err %v", err)
	}
}

// TestStepFailureKeepsLastGoodAdapter: a failed step saves nothing over
// what is on disk: the top of the folder keeps the last checkpoint's adapter.
func TestStepFailureKeepsLastGoodAdapter(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "adapter")
	_, err := Run(context.Background(), &fakeStepper{failAt: 4}, Plan{Method: SFT, Train: fakeRows(2), Iters: 9, BatchSize: 1, SaveEvery: 2, AdapterDir: dir}, Host{})
	if err == nil || !strings.Contains(err.Error(), "step 4: backend out of memory") {
		t.Fatalf("err %v", err)
	}
	if got := savedStep(t, dir); got != "2" {
		t.Errorf("the top-level adapter is of step %s after the failed step 4, not the last checkpoint's 2", got)
	}
	if savedStep(t, filepath.Join(dir, "checkpoints", "step-00002")) != "2" {
		t.Error("checkpoint lost")
	}
}

// TestCancelSavesLatest: cancelling stops at a step boundary and leaves the
// latest adapter.
func TestCancelSavesLatest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "adapter")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := Host{Emit: func(ev Event) {
		if ev.Kind == EventStep && ev.Step == 3 {
			cancel()
		}
	}}
	res, err := Run(ctx, &fakeStepper{}, Plan{Method: SFT, Train: fakeRows(2), Valid: fakeRows(2), Iters: 100, BatchSize: 1, AdapterDir: dir}, h)
	if err != nil || !res.Cancelled || res.Steps != 3 || savedStep(t, dir) != "3" {
		t.Fatalf("res %+v err %v", res, err)
	}
	m, _ := ReadMetrics(dir)
	if m == nil || !m.Cancelled || m.Finished {
		t.Errorf("metrics.json %+v", m)
	}
}

func TestBatcher(t *testing.T) {
	rows := fakeRows(7)
	order := func(seed uint64, shuffle bool) []string {
		b, err := NewBatcher(rows, 3, seed, shuffle)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for range 7 { // three epochs
			for _, r := range b.Next() {
				out = append(out, r.Source)
			}
		}
		return out
	}
	plain := order(1, false)
	for i, s := range plain {
		if s != rows[i%7].Source {
			t.Fatalf("no-shuffle order %v", plain)
		}
	}
	a, b, c := order(1, true), order(1, true), order(2, true)
	if !slices.Equal(a, b) || slices.Equal(a, c) || slices.Equal(a, plain) {
		t.Errorf("seeded shuffles: %v %v %v", a, b, c)
	}
	for e := range 3 { // each epoch is a permutation of the rows
		ep := slices.Clone(a[7*e : 7*e+7])
		slices.Sort(ep)
		want := slices.Clone(plain[:7])
		slices.Sort(want)
		if !slices.Equal(ep, want) {
			t.Errorf("epoch %d is %v", e, ep)
		}
	}
	if _, err := NewBatcher(rows[:2], 3, 0, false); err == nil {
		t.Error("a batch larger than the rows was accepted")
	}
}

// FuzzParseMetrics: no metrics.json bytes panic the reader.
func FuzzParseMetrics(f *testing.F) {
	m := &Metrics{Method: SFT, Iters: 3}
	m.addCheckpoint(2, "checkpoints/step-00002-val1.0000", 1, true)
	f.Add(m.encode())
	f.Add([]byte(`{"best": {"step": 1, "path": "x"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if m, err := ParseMetrics(data); err == nil && m.Best != nil {
			_ = *m.Best.ValLoss
		}
	})
}
