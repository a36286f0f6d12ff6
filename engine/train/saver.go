package train

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"perch/engine/lora"
	"perch/internal/durable"
)

// Snapshot is a host copy of an adapter's leaves that can be written to a
// folder (a *lora.Adapter).
type Snapshot interface {
	Save(dir string) error
}

// saver writes a run's files on its own goroutine, in the order asked, so
// the engine thread never waits on the disk: checkpoints, metrics.json and
// the metrics stream. A failed write is kept (the run fails with it) and
// later writes still run, so what can be saved is.
type saver struct {
	dir  string // the adapter folder
	jobs chan saveJob
	done chan struct{}
	// save writes a snapshot into a folder (Snapshot.Save; tests inject faults).
	save func(s Snapshot, dir string) error

	mu   sync.Mutex
	errs []error
}

type saveJob struct {
	what string // names the write in errors: "checkpoint step-00010"
	run  func() error
}

func newSaver(dir string, save func(Snapshot, string) error) *saver {
	if save == nil {
		save = func(s Snapshot, dir string) error { return s.Save(dir) }
	}
	s := &saver{dir: dir, jobs: make(chan saveJob, 64), done: make(chan struct{}), save: save}
	go s.loop()
	return s
}

func (s *saver) loop() {
	defer close(s.done)
	for j := range s.jobs {
		if err := j.run(); err != nil {
			s.mu.Lock()
			s.errs = append(s.errs, fmt.Errorf("%s: %w", j.what, err))
			s.mu.Unlock()
		}
	}
}

// do queues a write (blocking while 64 are already waiting).
func (s *saver) do(what string, run func() error) { s.jobs <- saveJob{what, run} }

// failed is the first failed write so far, or nil.
func (s *saver) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errs) == 0 {
		return nil
	}
	return s.errs[0]
}

// wait lets every queued write finish and returns their failures.
func (s *saver) wait() error {
	close(s.jobs)
	<-s.done
	return errors.Join(s.errs...)
}

// CheckpointName is a checkpoint's folder name: step-00010-val1.2345, or
// step-00010 without a validation loss.
func CheckpointName(step int, val float64, hasVal bool) string {
	if hasVal {
		return fmt.Sprintf("step-%05d-val%.4f", step, val)
	}
	return fmt.Sprintf("step-%05d", step)
}

// checkpoint saves snap as dir/checkpoints/name: written into a temporary
// folder beside it, then renamed into place, so a checkpoint folder is
// complete or absent.
func (s *saver) checkpoint(snap Snapshot, name string) error {
	root := filepath.Join(s.dir, "checkpoints")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(root, "."+name+".tmp-")
	if err != nil {
		return err
	}
	if err := s.save(snap, tmp); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	// a rerun into the same folder replaces its checkpoint
	if err := durable.ReplaceDir(tmp, filepath.Join(root, name)); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	return nil
}

// removeStale deletes the temporary files and folders an interrupted run
// left in dir and dir/checkpoints (never a finished file or checkpoint).
func removeStale(dir string) {
	top, _ := os.ReadDir(dir)
	for _, e := range top {
		n := e.Name()
		for _, f := range []string{lora.WeightsFile, lora.ConfigFile, ResumeFile, MetricsFile} {
			// ours, and durable's (".NAME-*.tmp")
			if strings.HasPrefix(n, "."+f+".tmp-") || strings.HasPrefix(n, "."+f+"-") && strings.HasSuffix(n, ".tmp") {
				os.Remove(filepath.Join(dir, n))
			}
		}
	}
	root := filepath.Join(dir, "checkpoints")
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, ".step-") && strings.Contains(n, ".tmp-") {
			os.RemoveAll(filepath.Join(root, n))
		}
	}
}
