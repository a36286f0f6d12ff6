package engine

import (
	"context"
	"os"
	"strings"
	"testing"

	"perch/engine/mlx"
	"perch/media/testinput"
)

// skipSlowMLX skips MLX media benchmarks without libmlxc, and on MLX's CPU
// backend unless PERCH_BENCH_MLX_MEDIA=1: there the E2B-sized towers take
// tens of minutes per run (on Metal they run by default).
func skipSlowMLX(b *testing.B) {
	if err := mlx.Available(); err != nil {
		b.Skip("libmlxc not found: MLX benchmarks skipped")
	}
	if os.Getenv("PERCH_BENCH_MLX_MEDIA") != "1" && !mlx.HasGPU() {
		b.Skip("MLX-CPU media benchmarks skipped: the E2B-sized towers take tens of minutes there; PERCH_BENCH_MLX_MEDIA=1 runs them")
	}
}

// benchClip is 10 s of a 440 Hz tone as 16 kHz WAV.
func benchClip(b *testing.B) []byte {
	w, err := testinput.ToneWAV(10)
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// BenchmarkMediaTTFT reports time to first token for a 280-token image
// prompt and a 10 s audio prompt on the E2B-shaped checkpoint (towers at
// E2B's real dims), per backend, and the speedup when the tower output
// comes from the encoder cache (same media, different question); go is the
// Go backend as users get it (int8 activations, towers included), go/exact its exact path.
func BenchmarkMediaTTFT(b *testing.B) {
	cases := []struct {
		name string
		kind PartType
		data func(*testing.B) []byte
		ph   int32
	}{
		{"image280", PartImage, func(*testing.B) []byte { return testinput.Picture280() }, 1016},
		{"audio10s", PartAudio, benchClip, 1017},
	}
	for _, mode := range []string{BackendGo, BackendGo + "/exact", BackendMLX} {
		backend, exact := strings.CutSuffix(mode, "/exact")
		for _, c := range cases {
			b.Run(c.name+"/"+mode, func(b *testing.B) {
				if backend == BackendMLX {
					skipSlowMLX(b)
				}
				e, err := Open(benchModel(b, "e2b-shaped-4bit"), Options{Backend: backend, Exact: exact})
				if err != nil {
					b.Fatal(err)
				}
				defer e.Close()
				data := c.data(b)
				ask := func(text int32) *Stats {
					zero := float32(0)
					ch, err := e.Generate(context.Background(), Request{PromptIDs: []int32{2, text, c.ph, 270}, MaxTokens: 1,
						Sampling: Sampling{Temperature: &zero}, Messages: []Message{{Role: RoleUser, Content: []Part{{Type: c.kind, Data: data}}}}})
					if err != nil {
						b.Fatal(err)
					}
					var s *Stats
					for ev := range ch {
						if ev.Kind == EventError {
							b.Fatal(ev.Err)
						}
						if ev.Kind == EventDone {
							s = ev.Stats
						}
					}
					return s
				}
				for i := 0; i < b.N; i++ {
					cold := ask(100 + int32(i)) // a new first token: no reusable prefix
					warm := ask(500 + int32(i)) // same media again: encoder-cache hit
					if warm.EncoderHits != 1 || cold.EncoderHits != 0 {
						b.Fatalf("encoder hits cold %d, warm %d", cold.EncoderHits, warm.EncoderHits)
					}
					b.ReportMetric(float64(cold.TimeToFirst.Milliseconds()), "ttft_ms")
					b.ReportMetric(float64(cold.TowerTime.Milliseconds()), "tower_ms")
					b.ReportMetric(float64(warm.TimeToFirst.Milliseconds()), "ttft_cached_ms")
					b.ReportMetric(cold.TimeToFirst.Seconds()/warm.TimeToFirst.Seconds(), "cache_speedup_x")
					b.ReportMetric(float64(cold.PromptByKind[string(c.kind)]), "soft_tokens")
				}
			})
		}
	}
}
