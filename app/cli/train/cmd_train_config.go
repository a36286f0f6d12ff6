package train

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"syscall"

	"gopkg.in/yaml.v3"

	"perch/engine/train"
)

// maxConfigBytes caps a -c config file (mlx-lm's are about 2 KB).
const maxConfigBytes = 1 << 20

// configFlags are mlx-lm's config keys with the flag each sets.
var configFlags = map[string]string{
	"model": "model", "train": "train", "fine_tune_type": "fine-tune-type", "training_mode": "train-mode",
	"train_mode": "train-mode", "optimizer": "optimizer", "data": "data", "seed": "seed", "num_layers": "lora-layers",
	"batch_size": "batch-size", "iters": "iters", "epochs": "epochs", "val_batches": "val-batches",
	"learning_rate": "learning-rate", "steps_per_report": "steps-per-report", "steps_per_eval": "val-every",
	"resume_adapter_file": "resume-adapter-file", "adapter_path": "adapter-path", "save_every": "save-every",
	"test": "test", "test_batches": "test-batches", "max_seq_length": "max-seq-len", "grad_checkpoint": "grad-checkpoint",
	"grad_accumulation_steps": "grad-accumulation-steps", "mask_prompt": "mask-prompt", "lora_plus_ratio": "lora-plus-ratio",
}

// configIgnored are keys of mlx-lm's that change nothing in Perch.
var configIgnored = map[string]string{
	"wandb": "Perch reports to metrics.jsonl only", "report_to": "Perch reports to metrics.jsonl only",
	"project_name": "Perch reports to metrics.jsonl only", "config": "",
}

// readConfig reads a YAML config of mlx-lm's training options into fs:
// a key whose flag was given on the command line keeps the flag's value
// (mlx-lm's rule). It returns notes about keys that change nothing.
func readConfig(path string, fs *flag.FlagSet, x *mlxFlags, f *trainFlags) ([]string, error) {
	raw, err := readSmallRegular(path, maxConfigBytes)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	set := func(name string, v any) error {
		if given[name] || v == nil || (name == "train-mode" && given["method"]) {
			return nil
		}
		switch v.(type) {
		case map[string]any, []any:
			return fmt.Errorf("%s: %s must be a single value", path, name)
		}
		if err := fs.Set(name, fmt.Sprint(v)); err != nil {
			return fmt.Errorf("%s: %s: %v", path, name, err)
		}
		return nil
	}
	var notes []string
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := doc[k]
		name, ok := configFlags[k]
		if !ok && fs.Lookup(strings.ReplaceAll(k, "_", "-")) != nil && isMethodParam(k) {
			name, ok = strings.ReplaceAll(k, "_", "-"), true
		}
		switch {
		case ok:
			err = set(name, v)
		case k == "lora_parameters":
			err = configLoRA(path, v, set, x)
		case k == "lr_schedule":
			err = configSchedule(path, v, given, f)
		case k == "optimizer_config":
			err = configOptimizer(path, v, set)
		case k == "hf_dataset":
			err = fmt.Errorf("%s: hf_dataset: Perch reads a data folder (train.jsonl, valid.jsonl, test.jsonl); give data", path)
		default:
			why, known := configIgnored[k]
			if !known {
				return nil, fmt.Errorf("%s: unknown key %q (perch train -h lists the options)", path, k)
			}
			if why != "" && v != nil {
				notes = append(notes, fmt.Sprintf("%s: %s ignored: %s", path, k, why))
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return notes, nil
}

func isMethodParam(k string) bool {
	for _, m := range train.MethodNames() {
		obj, _ := train.ObjectiveOf(train.Method(m))
		for _, p := range obj.Params() {
			if p.Name == k {
				return true
			}
		}
	}
	return false
}

func configLoRA(path string, v any, set func(string, any) error, x *mlxFlags) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: lora_parameters must be a mapping", path)
	}
	for k, val := range m {
		var err error
		switch k {
		case "rank":
			err = set("lora-rank", val)
		case "scale":
			err = set("lora-scale", val)
		case "dropout":
			err = set("lora-dropout", val)
		case "alpha": // mlx-lm's LoRA layers use scale, not alpha
		case "keys":
			list, ok := val.([]any)
			if !ok {
				return fmt.Errorf("%s: lora_parameters.keys must be a list", path)
			}
			x.keys = nil
			for _, key := range list {
				s, ok := key.(string)
				if !ok {
					return fmt.Errorf("%s: lora_parameters.keys holds %v, not a name", path, key)
				}
				x.keys = append(x.keys, s)
			}
		default:
			return fmt.Errorf("%s: unknown lora_parameters key %q (rank, scale, dropout, keys)", path, k)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// configSchedule reads mlx-lm's lr_schedule: {name: cosine_decay,
// warmup, warmup_init, arguments: [peak, decay_steps, end]}.
func configSchedule(path string, v any, given map[string]bool, f *trainFlags) error {
	if v == nil || given["lr-schedule"] {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: lr_schedule must be a mapping", path)
	}
	num := func(x any) (float64, bool) {
		switch n := x.(type) {
		case int:
			return float64(n), true
		case float64:
			return n, true
		}
		return 0, false
	}
	name, _ := m["name"].(string)
	args, _ := m["arguments"].([]any)
	if name != "cosine_decay" || len(args) < 2 || len(args) > 3 {
		return fmt.Errorf("%s: lr_schedule: Perch follows cosine_decay with arguments [peak, decay_steps, end] (and warmup, warmup_init)", path)
	}
	var vals [3]float64
	for i, a := range args {
		n, ok := num(a)
		if !ok {
			return fmt.Errorf("%s: lr_schedule.arguments[%d] is not a number", path, i)
		}
		vals[i] = n
	}
	f.schedule, f.lr, f.decaySteps, f.scheduleEnd = "cosine", vals[0], int(vals[1]), vals[2]
	if w, ok := num(m["warmup"]); ok {
		f.warmup = int(w)
	}
	if w, ok := num(m["warmup_init"]); ok {
		f.warmupInit = w
	}
	return nil
}

// configOptimizer reads optimizer_config: weight_decay is Perch's
// --weight-decay; MLX's other AdamW settings are fixed at their defaults.
func configOptimizer(path string, v any, set func(string, any) error) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: optimizer_config must be a mapping", path)
	}
	for opt, sub := range m {
		c, ok := sub.(map[string]any)
		if sub == nil || (ok && len(c) == 0) {
			continue
		}
		if !ok || (opt != "adamw" && opt != "adam") {
			return fmt.Errorf("%s: optimizer_config.%s: Perch trains with adamw", path, opt)
		}
		for k, val := range c {
			if k != "weight_decay" {
				return fmt.Errorf("%s: optimizer_config.%s.%s: Perch's AdamW keeps MLX's defaults (betas 0.9, 0.999, eps 1e-8, no bias correction); only weight_decay can be set", path, opt, k)
			}
			if err := set("weight-decay", val); err != nil {
				return err
			}
		}
	}
	return nil
}

// readSmallRegular reads a regular file of at most limit bytes; the type
// is checked before it is opened for reading (a FIFO would block).
func readSmallRegular(path string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	fh, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	raw, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) > limit {
		return nil, errors.New(path + ": over the 1 MiB a config may hold")
	}
	return raw, nil
}
