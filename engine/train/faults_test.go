package train

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"perch/engine/gocpu"
	"perch/engine/lora"
)

// realRun trains the tiny model on the fixture's SFT rows with the real
// trainer, checkpointing every 2 steps.
func realRun(t *testing.T, dir string, h Host) (*Result, error) {
	t.Helper()
	fx := newFixture(t, gocpu.New(gocpu.Options{}))
	opts := Options{Method: SFT, LearningRate: 1e-3, GradClip: 1}
	tr := fx.trainer(opts)
	p := Plan{Method: SFT, Train: fx.sftRows(), Valid: fx.sftRows(), Iters: 6, BatchSize: 2, SaveEvery: 2, AdapterDir: dir,
		Settings: &Settings{Options: opts, LoRA: fx.ad.Config, Iters: 6, BatchSize: 2, SaveEvery: 2}}
	return Run(context.Background(), Driven(tr), p, h)
}

// TestDiskFullDuringCheckpoint: with the real trainer, a disk that fills up
// while the second checkpoint is written fails the run with an error
// naming that checkpoint; the first checkpoint stays whole and loadable,
// and no half-written folder is left.
func TestDiskFullDuringCheckpoint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "adapter")
	full := Host{save: func(s Snapshot, d string) error {
		if !strings.HasPrefix(filepath.Base(d), ".step-00004") {
			return s.Save(d)
		}
		os.WriteFile(filepath.Join(d, lora.WeightsFile), []byte("torn"), 0o644) // what got written before the disk filled
		time.Sleep(300 * time.Millisecond)                                      // a slow disk: training has gone past the next checkpoint's step
		return &os.PathError{Op: "write", Path: filepath.Join(d, lora.WeightsFile), Err: syscall.ENOSPC}
	}}
	_, err := realRun(t, dir, full)
	if err == nil || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "checkpoint checkpoints/step-00004-val") {
		t.Fatalf("err %v", err)
	}
	t.Logf("the run failed with: %v", err)
	entries, _ := os.ReadDir(filepath.Join(dir, "checkpoints"))
	if len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), "step-00002-val") {
		t.Fatalf("checkpoints folder holds %v", entries)
	}
	if _, err := lora.Load(filepath.Join(dir, "checkpoints", entries[0].Name())); err != nil {
		t.Errorf("the first checkpoint does not load: %v", err)
	}
	m, err := ReadMetrics(dir)
	if err != nil || m.Finished || !strings.Contains(m.Error, "no space left") {
		t.Errorf("metrics.json %+v %v", m, err)
	}
}

// TestUnwritableCheckpointFolder: a checkpoints path the run cannot create
// (a file is in its place; no permission bit can fake that for root) fails
// the run naming the checkpoint, and the latest adapter is still saved.
func TestUnwritableCheckpointFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "adapter")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "checkpoints"), []byte("in the way"), 0o644)
	res, err := realRun(t, dir, Host{})
	if err == nil || !strings.Contains(err.Error(), "checkpoint checkpoints/step-00002") || !strings.Contains(err.Error(), "latest adapter") {
		t.Fatalf("err %v", err)
	}
	if _, err := lora.Load(dir); err != nil || res.Steps < 2 {
		t.Errorf("latest adapter (after step %d): %v", res.Steps, err)
	}
}
