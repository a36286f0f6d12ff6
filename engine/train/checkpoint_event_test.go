package train

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// A checkpoint event means the folder is complete: a caller that records
// it (the app's run history) never records one a crash leaves half
// written, even when saving is slower than training.
func TestCheckpointEventFollowsTheSave(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "adapter")
	var mu sync.Mutex
	var bad []string
	seen := 0
	h := Host{Emit: func(ev Event) {
		if ev.Kind != EventCheckpoint {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		seen++
		if _, err := os.Stat(filepath.Join(ev.Path, "adapters.safetensors")); err != nil {
			bad = append(bad, ev.Path)
		}
	}}
	h.save = func(s Snapshot, dir string) error {
		time.Sleep(20 * time.Millisecond) // a slow disk
		return s.Save(dir)
	}
	p := Plan{Method: SFT, Train: fakeRows(4), Iters: 6, BatchSize: 1, SaveEvery: 2, AdapterDir: dir, NoShuffle: true}
	if _, err := Run(context.Background(), &fakeStepper{}, p, h); err != nil {
		t.Fatal(err)
	}
	if seen != 3 || len(bad) > 0 {
		t.Fatalf("%d checkpoint events; reported before their files existed: %v", seen, bad)
	}
}
