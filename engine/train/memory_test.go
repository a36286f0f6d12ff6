package train

import (
	"runtime"
	"testing"
)

// TestMemoryFlat: 60 SFT steps on the tiny model hold the same activation
// memory every step, and the backend's memory does not grow: MLX's active
// memory after a step is the same at step 60 as at step 10 (±1 MiB, the
// new leaves replace the old), the Go heap after a collection too (±2 MiB),
// and the Go backend's sampled step peak stays within 1.5× (+4 MiB) of the
// early steps'.
func TestMemoryFlat(t *testing.T) {
	for _, bc := range goldenBackends() {
		if bc.name == "go-plain" {
			continue
		}
		t.Run(bc.name, func(t *testing.T) {
			fx := newFixture(t, bc.make(t))
			tr := fx.trainer(Options{Method: SFT, LearningRate: 1e-4, GradClip: 1})
			rows := fx.sftRows()
			var tape0, early, late int64
			var after10 int64
			for k := 1; k <= 60; k++ {
				m, err := tr.Step(rows)
				if err != nil {
					t.Fatal(err)
				}
				if k == 1 {
					tape0 = m.TapeBytes
				} else if m.TapeBytes != tape0 {
					t.Fatalf("step %d holds %d activation bytes, step 1 %d", k, m.TapeBytes, tape0)
				}
				switch {
				case k >= 5 && k <= 20:
					early = max(early, m.PeakMemory)
				case k >= 45:
					late = max(late, m.PeakMemory)
				}
				if k == 10 || k == 60 {
					var n int64
					if bc.name == "mlx" {
						n = fx.b.ActiveMemory()
					} else {
						runtime.GC()
						var ms runtime.MemStats
						runtime.ReadMemStats(&ms)
						n = int64(ms.HeapAlloc)
					}
					if k == 10 {
						after10 = n
					} else {
						slack := int64(2 << 20)
						if bc.name == "mlx" {
							slack = 1 << 20
						}
						if n > after10+slack {
							t.Fatalf("memory after step 60 is %d bytes, after step 10 %d", n, after10)
						}
						t.Logf("memory after step 10: %d, after step 60: %d; step peak early %d, late %d; activations %d bytes/step", after10, n, early, late, tape0)
					}
				}
			}
			if late > early*3/2+4<<20 {
				t.Fatalf("step peak grew from %d to %d bytes", early, late)
			}
		})
	}
}

// TestRecomputeMemory: on a 96-token row the recomputed backward holds
// fewer activation bytes than the recorded one (one layer's tape plus the
// saved layer inputs against every layer's tape), and both give the same
// gradients (TestFamilies, the goldens).
func TestRecomputeMemory(t *testing.T) {
	fx := newFixture(t, goldenBackends()[1].make(t))
	ids := make([]int32, 96)
	for i := range ids {
		ids[i] = int32(2 + (i*37)%1000)
	}
	rows := []Row{{IDs: ids, PromptLen: 8, Source: "long"}}
	var bytes [2]int64
	for i, nr := range []bool{false, true} {
		tr := fx.trainer(Options{Method: SFT, NoRecompute: nr})
		m, _, err := tr.run(rows, true)
		if err != nil {
			t.Fatal(err)
		}
		bytes[i] = m.TapeBytes
	}
	if bytes[0]*2 > bytes[1] {
		t.Fatalf("recompute holds %d activation bytes, no recompute %d", bytes[0], bytes[1])
	}
	t.Logf("96 tokens: activations %d bytes with recompute, %d without (%.1fx)", bytes[0], bytes[1], float64(bytes[1])/float64(bytes[0]))
}
