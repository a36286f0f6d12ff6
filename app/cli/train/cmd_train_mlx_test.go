package train

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"perch/engine/train"
)

// mlxRun runs perch train with args as a person would (no --json) and
// returns its output; it fails the test on a non-zero exit unless fail.
func mlxRun(t *testing.T, fail bool, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	code := runTrain(args, &out, &errOut)
	if (code != 0) != fail {
		t.Fatalf("perch train %v: exit %d: %s %s", args, code, errOut.String(), out.String())
	}
	return out.String() + errOut.String()
}

func mlxData(t *testing.T, test bool) string {
	data := t.TempDir()
	writeJSONL(t, data, "train.jsonl", teachRows(8)...)
	writeJSONL(t, data, "valid.jsonl", teachRows(2)...)
	if test {
		writeJSONL(t, data, "test.jsonl", teachRows(3)...)
	} else {
		os.WriteFile(filepath.Join(data, "test.jsonl"), []byte("not JSON\n"), 0o644)
	}
	return data
}

// TestMLXReadmeCommands: mlx-lm's LORA.md commands, with perch train for
// mlx_lm.lora and the tiny model and a small folder for the placeholders.
func TestMLXReadmeCommands(t *testing.T) {
	data := mlxData(t, true)
	adapters := filepath.Join(t.TempDir(), "adapters")
	// mlx_lm.lora --model <path_to_model> --train --data <path_to_data> --iters 600
	out := mlxRun(t, false, "--model", tinyModel, "--train", "--data", data, "--iters", "6", "--adapter-path", adapters)
	if _, err := os.Stat(filepath.Join(adapters, "adapters.safetensors")); err != nil {
		t.Fatalf("no adapter after training: %v\n%s", err, out)
	}
	// mlx_lm.lora --model <path_to_model> --adapter-path <path_to_adapters> --data <path_to_data> --test
	out = mlxRun(t, false, "--model", tinyModel, "--adapter-path", adapters, "--data", data, "--test")
	if !strings.Contains(out, "Test loss ") || strings.Contains(out, "training ") {
		t.Errorf("--test alone should evaluate and not train:\n%s", out)
	}
	// mlx_lm.lora --model <path_to_model> --train --data <path_to_data> --mask-prompt --batch-size 1
	//   --num-layers 4 --grad-checkpoint --grad-accumulation-steps 2 --max-seq-length 512 --steps-per-eval 3 --steps-per-report 2
	out = mlxRun(t, false, "--model", tinyModel, "--train", "--data", data, "--mask-prompt", "--batch-size", "1", "--num-layers", "4",
		"--grad-checkpoint", "--grad-accumulation-steps", "2", "--max-seq-length", "512", "--steps-per-eval", "3",
		"--steps-per-report", "2", "--iters", "4", "--adapter-path", filepath.Join(t.TempDir(), "a"), "--test", "--test-batches", "1")
	if !strings.Contains(out, "step 2/4") || !strings.Contains(out, "Test loss ") || !strings.Contains(out, "step 3: validation loss") {
		t.Errorf("report every 2, validate every 3, test at the end:\n%s", out)
	}
	out = mlxRun(t, true, "--model", tinyModel, "--train", "--data", data, "--fine-tune-type", "dora")
	if !strings.Contains(out, "LoRA adapters only") {
		t.Errorf("dora: %s", out)
	}
	out = mlxRun(t, true, "--model", tinyModel, "--train", "--data", data, "--optimizer", "sgd")
	if !strings.Contains(out, "adamw") {
		t.Errorf("sgd: %s", out)
	}
}

// Without --test a broken test.jsonl is not read; with it the run fails
// naming the line.
func TestTestJSONLOnlyWithTest(t *testing.T) {
	data := mlxData(t, false)
	mlxRun(t, false, "--model", tinyModel, "--data", data, "--iters", "2", "--adapter-path", filepath.Join(t.TempDir(), "a"))
	out := mlxRun(t, true, "--model", tinyModel, "--data", data, "--iters", "2", "--test", "--adapter-path", filepath.Join(t.TempDir(), "b"))
	if !strings.Contains(out, "test.jsonl:1") {
		t.Errorf("a broken test.jsonl with --test: %s", out)
	}
}

// TestMLXConfig: a config with every key of mlx-lm's example
// lora_config.yaml (its values, the paths ours, fewer iterations) runs,
// and a flag given wins over the file.
func TestMLXConfig(t *testing.T) {
	data := mlxData(t, true)
	adapters := filepath.Join(t.TempDir(), "adapters")
	cfg := filepath.Join(t.TempDir(), "lora_config.yaml")
	yaml := fmt.Sprintf(`model: %q
train: true
fine_tune_type: lora
training_mode: normal 
optimizer: adamw
data: %q
seed: 0
num_layers: 16
batch_size: 4
iters: 4
val_batches: 25
learning_rate: 1e-5
steps_per_report: 10
steps_per_eval: 200
resume_adapter_file: null
adapter_path: %q
save_every: 100
test: false
test_batches: 100
max_seq_length: 2048
grad_checkpoint: false
lora_parameters:
  keys: ["self_attn.q_proj", "self_attn.v_proj"]
  rank: 8
  scale: 20.0
  dropout: 0.0
lr_schedule:
  name: cosine_decay
  warmup: 1
  warmup_init: 1e-7
  arguments: [1e-5, 4, 1e-7]
`, tinyModel, data, adapters)
	os.WriteFile(cfg, []byte(yaml), 0o644)
	out := mlxRun(t, false, "-c", cfg, "--iters", "3")
	m, err := train.ReadMetrics(adapters)
	if err != nil || m.Steps != 3 {
		t.Fatalf("metrics %+v %v\n%s", m, err, out)
	}
	raw, _ := os.ReadFile(filepath.Join(adapters, "adapter_config.json"))
	if !strings.Contains(string(raw), `"self_attn.v_proj"`) || strings.Contains(string(raw), `"mlp.up_proj"`) {
		t.Errorf("lora_parameters.keys not applied: %s", raw)
	}
	os.WriteFile(cfg, []byte(yaml+"hf_dataset:\n  name: billsum\n"), 0o644)
	if out := mlxRun(t, true, "-c", cfg); !strings.Contains(out, "hf_dataset") {
		t.Errorf("hf_dataset: %s", out)
	}
	os.WriteFile(cfg, []byte(yaml+"no_such_key: 1\n"), 0o644)
	if out := mlxRun(t, true, "-c", cfg); !strings.Contains(out, `unknown key "no_such_key"`) {
		t.Errorf("unknown key: %s", out)
	}
}

// FuzzReadConfig: any bytes as a config give a config or an error, never a panic.
func FuzzReadConfig(f *testing.F) {
	for _, s := range []string{"iters: 3\n", "lora_parameters:\n  keys: [a]\n  rank: 4\n", "lr_schedule:\n  name: cosine_decay\n  arguments: [1e-5, 10]\n",
		"optimizer_config:\n  adamw:\n    weight_decay: 0.1\n", "data: [1, 2]\n", "- a\n"} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, raw []byte) {
		path := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Skip(err)
		}
		tf := &trainFlags{}
		fs := newTrainFlagSet(tf, &bytes.Buffer{})
		readConfig(path, fs, tf.mlx, tf)
	})
}

// --resume-adapter-file takes mlx-lm's file path (its folder's config
// applies) and --train-mode mlx-lm-lora's method names.
func TestResumeAdapterFileAndTrainMode(t *testing.T) {
	data := mlxData(t, false)
	first := filepath.Join(t.TempDir(), "first")
	mlxRun(t, false, "--model", tinyModel, "--data", data, "--iters", "2", "--lora-rank", "4", "--adapter-path", first)
	second := filepath.Join(t.TempDir(), "second")
	out := mlxRun(t, false, "--model", tinyModel, "--data", data, "--iters", "2", "--train-mode", "sft",
		"--resume-adapter-file", filepath.Join(first, "adapters.safetensors"), "--adapter-path", second)
	raw, _ := os.ReadFile(filepath.Join(second, "adapter_config.json"))
	if !strings.Contains(out, "training sft") || !strings.Contains(string(raw), `"rank": 4`) {
		t.Errorf("the resumed run should keep the file's rank 4 (the default is 8): %s\n%s", raw, out)
	}
	out = mlxRun(t, true, "--model", tinyModel, "--data", data, "--method", "dpo", "--train-mode", "sft")
	if !strings.Contains(out, "disagree") {
		t.Errorf("--method and --train-mode disagreeing: %s", out)
	}
}

// TestMLXGenerateAndFuseCommands: LORA.md's generate and fuse commands,
// with perch ask for mlx_lm.generate and perch train fuse for mlx_lm.fuse
// (whose defaults, ./adapters into ./fused_model, are Perch's too).
func TestMLXGenerateAndFuseCommands(t *testing.T) {
	model, err := filepath.Abs(tinyModel)
	if err != nil {
		t.Fatal(err)
	}
	golden, err := filepath.Abs(loraTiny) // an adapter that changes the greedy answer
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	t.Chdir(work)
	data := mlxData(t, false)
	mlxRun(t, false, "--model", model, "--train", "--data", data, "--iters", "4")
	// mlx_lm.generate --model <path_to_model> --adapter-path <path_to_adapters> --prompt "<your_model_prompt>"
	// answers as perch ask with Perch's names does, and unlike the base.
	tokens := func(args ...string) string {
		var out, errOut bytes.Buffer
		if code := runAsk(append([]string{"--model", model, "--max-tokens", "4", "--json"}, args...), &out, &errOut); code != 0 {
			t.Fatalf("ask %q: exit %d: %s", args, code, errOut.String())
		}
		var lines []string
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.Contains(l, `"type":"token"`) {
				lines = append(lines, l)
			}
		}
		return strings.Join(lines, "\n")
	}
	mlx := tokens("--adapter-path", golden, "--prompt", "Which bird sings?", "--temp", "0")
	perch := tokens("--adapter", golden, "--temperature", "0", "Which", "bird", "sings?")
	if base := tokens("--temperature", "0", "Which bird sings?"); mlx == "" || mlx != perch || mlx == base {
		t.Fatalf("mlx_lm.generate's names answered\n%s\nPerch's\n%s\nthe base\n%s", mlx, perch, base)
	}
	var out, errOut bytes.Buffer
	// mlx_lm.fuse --model <path_to_model>
	if code := runTrainFuse([]string{"--model", model}, &out, &errOut); code != 0 {
		t.Fatalf("fuse: exit %d: %s", code, errOut.String())
	}
	for _, f := range []string{"model.safetensors", "config.json", "tokenizer.json"} {
		if _, err := os.Stat(filepath.Join(work, "fused_model", f)); err != nil {
			t.Errorf("fused_model: %v (%s)", err, out.String())
		}
	}
}
