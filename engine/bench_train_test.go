package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"perch/engine/gemma4"
	"perch/engine/lora"
	"perch/engine/mlx"
	"perch/engine/train"
)

// The training benchmark: one SFT LoRA step (sequence 256, batch 1, rank 8,
// scale 20, every attention and MLP projection adapted) on the tiny model
// and the E2B-shaped 4-bit checkpoint, on the Go backend (and MLX where
// installed), side by side in one run with the same step in PyTorch on the
// CPU (engine/train/bench/gemma4_torch.py, Debian's python3-torch; its
// weights dequantized to float32, PyTorch having no 4-bit CPU kernel).
// Achieved GFLOP/s count the useful work of a step, the frozen matmuls
// forward and their input gradients plus the LoRA matmuls forward and
// backward (a recomputed forward is not counted), against the machine's
// FMA peak measured in the same run (engine/train/bench/fmaprobe.c).
// Peak memory is the process's peak RSS over the steps (VmHWM, reset after
// the model loads), weights included. Both run each step twice over: with
// per-layer recompute (the trainer's default, and what the target is
// about) and keeping every activation (metrics with _norecompute); in each
// mode PyTorch's three steps run right before ours, and the x_torch_*
// ratios compare the two in the same mode.

const (
	benchSeq   = 256
	benchRank  = 8
	benchSteps = 3
	torchPy    = "/usr/bin/python3" // Debian's, where python3-torch installs
	mlxCPUSkip = "MLX runs on the CPU here, where its 4-bit kernels take minutes per step: the E2B-shaped step runs on MLX only with a GPU"
)

func BenchmarkTrainVsTorch(b *testing.B) {
	var notes []string // shown with the first sub-benchmark (a parent's log is not printed)
	logf := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
	peak := fmaPeak(logf)
	torchCrossCheck(logf)
	for _, model := range []string{"text-tiny", "e2b-shaped-4bit"} {
		dir := benchModel(b, model)
		cfg, err := gemma4.LoadConfig(dir)
		if err != nil {
			b.Fatal(err)
		}
		flops := stepFLOPs(&cfg.Text, benchSeq, benchRank)
		logf("%s: %.1f GFLOP of useful work per step", model, flops/1e9)
		backends := []string{BackendGo}
		if mlx.Available() == nil {
			backends = append(backends, BackendMLX)
			if model != "text-tiny" && !mlx.HasGPU() { // said here too: a skipped benchmark prints nothing without -v
				logf("%s/%s: skipped, %s", model, BackendMLX, mlxCPUSkip)
			}
		}
		for _, backend := range backends {
			b.Run(model+"/"+backend, func(b *testing.B) {
				for _, n := range notes {
					b.Log(n)
				}
				notes = nil
				if backend == BackendMLX && model != "text-tiny" && !mlx.HasGPU() {
					b.Skip(mlxCPUSkip)
				}
				// Each mode: PyTorch's step, then ours, back to back, so
				// that the two see the same machine.
				for _, recompute := range []bool{true, false} {
					sfx := ""
					if !recompute {
						sfx = "_norecompute"
					}
					torch := torchStep(b.Logf, dir, recompute)
					var tokS float64
					var rss int64
					for i := 0; i < b.N; i++ {
						tokS, rss = goTrainStep(b, dir, backend, recompute)
					}
					b.ReportMetric(tokS, "tok/s"+sfx)
					b.ReportMetric(float64(rss)/(1<<20), "peak_rss_MiB"+sfx)
					if recompute {
						b.ReportMetric(flops*tokS/benchSeq/1e9, "GFLOP/s")
						if peak > 0 {
							b.ReportMetric(peak, "peak_GFLOP/s")
							b.ReportMetric(100*flops*tokS/benchSeq/1e9/peak, "%peak")
						}
					}
					if torch == nil {
						continue
					}
					b.ReportMetric(torch.tokS, "torch_tok/s"+sfx)
					b.ReportMetric(float64(torch.rss)/(1<<20), "torch_peak_rss_MiB"+sfx)
					b.ReportMetric(tokS/torch.tokS, "x_torch_speed"+sfx)
					b.ReportMetric(float64(rss)/float64(torch.rss), "x_torch_memory"+sfx)
				}
			})
		}
	}
}

// goTrainStep runs benchSteps steps through Engine.Train (with per-layer
// recompute or keeping every activation) and returns the median step's
// tokens/s and the peak RSS over the steps.
func goTrainStep(b *testing.B, dir, backend string, recompute bool) (float64, int64) {
	e, err := Open(dir, Options{Backend: backend})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	ids := make([]int32, benchSeq)
	ids[0] = 2
	for i := 1; i < benchSeq; i++ {
		ids[i] = 3 + rng.Int32N(int32(e.cfg.Text.VocabSize-3))
	}
	cfg := lora.DefaultConfig()
	cfg.LoRA.Rank, cfg.LoRA.Scale = benchRank, 20
	resetPeakRSS()
	run, err := e.Train(context.Background(), TrainRequest{Train: []train.Row{{IDs: ids, PromptLen: 1}}, Iters: benchSteps,
		BatchSize: 1, NoShuffle: true, LoRA: cfg, Options: train.Options{LearningRate: 1e-5, NoRecompute: !recompute}, AdapterDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	var rates []float64
	var line string // one log line per run: a benchmark shows only its first 10
	for ev := range run.Events() {
		switch ev.Kind {
		case train.EventError:
			b.Fatal(ev.Err)
		case train.EventStep:
			rates = append(rates, ev.TokensPerSec)
			line += fmt.Sprintf("; step %d loss %.4f %.1f tok/s, backend peak %d MiB", ev.Step, ev.Metrics.Loss, ev.TokensPerSec, ev.Metrics.PeakMemory>>20)
		}
	}
	b.Logf("%s (recompute %v)%s", backend, recompute, line)
	if len(rates) != benchSteps {
		b.Fatalf("%d steps reported", len(rates))
	}
	return median(rates), peakRSS(b)
}

type torchResult struct {
	tokS float64
	rss  int64
}

// torchStep runs the same step in PyTorch (with per-layer recompute, as
// ours, or keeping every activation), or says why it cannot.
func torchStep(logf func(string, ...any), dir string, recompute bool) *torchResult {
	if err := exec.Command(torchPy, "-c", "import torch, numpy").Run(); err != nil {
		logf("PyTorch is not installed (apt-get install python3-torch python3-numpy): no comparison")
		return nil
	}
	abs, _ := filepath.Abs(dir)
	args := []string{filepath.Join("train", "bench", "gemma4_torch.py"), "bench", abs,
		"--seq", fmt.Sprint(benchSeq), "--rank", fmt.Sprint(benchRank), "--steps", fmt.Sprint(benchSteps)}
	if !recompute {
		args = append(args, "--no-recompute")
	}
	out, err := exec.Command(torchPy, args...).Output()
	if err != nil {
		logf("PyTorch step failed: %v", err)
		return nil
	}
	var r struct {
		Torch string `json:"torch"`
		Steps []struct {
			Seconds float64 `json:"seconds"`
			RSS     int64   `json:"peak_rss_bytes"`
			Loss    float64 `json:"loss"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(out, &r); err != nil || len(r.Steps) == 0 {
		logf("PyTorch step: %v (%s)", err, out)
		return nil
	}
	res := &torchResult{}
	var rates []float64
	var line string // one line per run: a benchmark's log shows only its first 10 lines
	for i, s := range r.Steps {
		rates = append(rates, benchSeq/s.Seconds)
		res.rss = max(res.rss, s.RSS)
		line += fmt.Sprintf("; step %d %.1f s (%.1f tok/s) loss %.4f", i+1, s.Seconds, benchSeq/s.Seconds, s.Loss)
	}
	res.tokS = median(rates)
	logf("torch %s (recompute %v): peak RSS %d MiB%s", r.Torch, recompute, res.rss>>20, line)
	return res
}

// torchCrossCheck runs the PyTorch model in float64 against the goldens
// (lora-tiny: forward, losses, SFT gradients; text-tiny-q4: the 4-bit
// path), so its timings are of a model that computes the same thing.
func torchCrossCheck(logf func(string, ...any)) {
	script := filepath.Join("train", "bench", "gemma4_torch.py")
	for _, args := range [][]string{
		{"check", filepath.Join(testdata, "models", "text-tiny"), filepath.Join(testdata, "goldens", "lora-tiny")},
		{"check-base", filepath.Join(testdata, "models", "text-tiny-q4"), filepath.Join(testdata, "goldens", "text-tiny-q4")},
	} {
		out, err := exec.Command(torchPy, append([]string{script}, args...)...).Output()
		if err != nil {
			logf("PyTorch cross-check %s: %v", args[0], err)
			continue
		}
		logf("PyTorch float64 cross-check %s: %s", args[0], bytes.TrimSpace(out))
	}
}

// fmaPeak measures the machine's float32 FMA peak (GFLOP/s, every core).
func fmaPeak(logf func(string, ...any)) float64 {
	tmp, err := os.MkdirTemp("", "perch-fmaprobe-")
	if err != nil {
		logf("FMA probe: %v", err)
		return 0
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "fmaprobe")
	if out, err := exec.Command("cc", "-O2", "-pthread", "-o", bin, filepath.Join("train", "bench", "fmaprobe.c")).CombinedOutput(); err != nil {
		logf("no C compiler for the FMA probe (%v: %s): no peak", err, out)
		return 0
	}
	out, err := exec.Command(bin).Output()
	var r struct {
		Threads int      `json:"threads"`
		AVX2    float64  `json:"avx2_gflops"`
		AVX512  *float64 `json:"avx512_gflops"`
	}
	if err != nil || json.Unmarshal(out, &r) != nil {
		logf("FMA probe: %v (%s)", err, out)
		return 0
	}
	peak := r.AVX2
	if r.AVX512 != nil {
		peak = max(peak, *r.AVX512)
	}
	logf("FMA peak: %.1f GFLOP/s on %d threads (AVX2 %.1f)", peak, r.Threads, r.AVX2)
	return peak
}

// stepFLOPs is the useful work of one SFT step over L tokens: the frozen
// matmuls forward and their input gradients (2x forward), the LoRA
// matmuls forward, input and weight gradients (3x forward).
func stepFLOPs(t *gemma4.TextConfig, L, r int) float64 {
	l := float64(L)
	var base, adapter float64
	lin := func(in, out int, adapted bool) {
		base += 2 * l * float64(in) * float64(out)
		if adapted {
			adapter += 2 * l * float64(r) * float64(in+out)
		}
	}
	H, P := t.HiddenSize, t.HiddenSizePerLayerInput
	for i := 0; i < t.NumHiddenLayers; i++ {
		hd, nH, nKV := t.HeadDimOf(i), t.NumAttentionHeads, t.KVHeadsOf(i)
		lin(H, nH*hd, true)
		if t.KVDonor(i) == i {
			lin(H, nKV*hd, true)
			lin(H, nKV*hd, true)
		}
		lin(nH*hd, H, true)
		base += 4 * l * l * float64(hd*nH) // scores and values
		I := t.MLPWidth(i)
		lin(H, I, true)
		lin(H, I, true)
		lin(I, H, true)
		if P > 0 {
			lin(H, P, false)
			lin(P, H, false)
		}
	}
	if P > 0 {
		lin(H, t.NumHiddenLayers*P, false)
	}
	lin(H, t.VocabSize, false) // tied head
	return 2*base + 3*adapter
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

// resetPeakRSS restarts VmHWM (Linux: clear_refs 5); elsewhere a no-op.
func resetPeakRSS() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }
