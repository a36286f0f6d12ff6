package engine

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestMaxLenBeyondTheModel: a row length beyond the model's context
// (4096 on the tiny model) is refused before the
// dataset is read or anything sized by it is allocated.
func TestMaxLenBeyondTheModel(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{Backend: BackendGo})
	ctx := e.cfg.Text.MaxPositionEmbeddings
	for _, n := range []int{300000, ctx + 1, -1} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := e.Train(context.Background(), TrainRequest{Data: "/nonexistent", MaxLen: n, Iters: 1, BatchSize: 1, AdapterDir: t.TempDir()})
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("at most %d tokens", ctx)) {
			t.Errorf("--max-seq-len %d: %v", n, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
			t.Errorf("--max-seq-len %d: %d bytes allocated before the refusal", n, grew)
		}
	}
}
