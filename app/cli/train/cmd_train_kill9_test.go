package train

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"perch/engine/lora"
	"perch/engine/train"
)

const trainKillEnv = "PERCH_TRAIN_KILL9_ARGS"

// TestTrainKill9Helper is the process TestTrainKill9Resume kills: perch
// train with the arguments in the environment (JSON), printing --json lines.
func TestTrainKill9Helper(t *testing.T) {
	raw := os.Getenv(trainKillEnv)
	if raw == "" {
		t.Skip("helper process for TestTrainKill9Resume (runs only when that test starts it)")
	}
	var args []string
	json.Unmarshal([]byte(raw), &args)
	os.Exit(runTrain(args, os.Stdout, os.Stderr))
}

// TestTrainKill9Resume kills perch train with SIGKILL at 20 seeded random
// steps of a 60-step run (SFT with dropout; DPO with LoRA+ 16), continuing
// it with --resume after each. After every kill the top-level adapter
// loads, and every checkpoint metrics.json names loads; the final adapter
// is bit for bit the uninterrupted run's, and metrics.jsonl is one series:
// steps 1..60 once each, the validations at the uninterrupted run's steps
// with its losses.
func TestTrainKill9Resume(t *testing.T) {
	if testing.Short() {
		t.Skip("kill -9 matrix over the real trainer; skipped with -short")
	}
	for _, c := range []struct {
		method string
		rows   func(int) []any
		extra  []string
	}{
		{"sft", teachRows, []string{"--lora-dropout", "0.1"}},
		{"dpo", prefRows, []string{"--lora-plus-ratio", "16", "--batch-size", "1"}},
	} {
		t.Run(c.method, func(t *testing.T) {
			t.Parallel()
			data := t.TempDir()
			writeJSONL(t, data, "train.jsonl", c.rows(7)...)
			writeJSONL(t, data, "valid.jsonl", c.rows(1)...)
			args := func(dir string) []string {
				return append([]string{"--model", tinyModel, "--backend", "go", "--data", data, "--method", c.method,
					"--iters", "60", "--batch-size", "2", "--learning-rate", "2e-3", "--lora-rank", "4", "--lora-scale", "2",
					"--val-every", "10", "--save-every", "3", "--seed", "5", "--adapter-path", dir, "--json"}, c.extra...)
			}
			whole := filepath.Join(t.TempDir(), "whole")
			trainLines(t, args(whole)...)
			want := fileSHA(t, filepath.Join(whole, lora.WeightsFile))

			dir := filepath.Join(t.TempDir(), "killed")
			rng := rand.New(rand.NewSource(21))
			kills := rng.Perm(59)[:20]
			for i := range kills {
				kills[i]++ // steps 1..59
			}
			slices.Sort(kills)
			for i, k := range kills {
				a := args(dir)
				if i > 0 {
					a = append(a, "--resume", dir)
				}
				if got := runUntilStep(t, a, k); got != k {
					t.Fatalf("kill %d: the run ended at step %d before step %d", i, got, k)
				}
				checkAfterKill(t, dir, k)
			}
			last := runUntilStep(t, append(args(dir), "--resume", dir), 0)
			if last != 60 {
				t.Fatalf("the last process stopped at step %d", last)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(left) > 0 {
				t.Errorf("temporary files left at the top of the folder: %v", left)
			}
			if got := fileSHA(t, filepath.Join(dir, lora.WeightsFile)); got != want {
				t.Fatalf("the resumed run's adapter sha256 %s differs from the uninterrupted run's %s", got, want)
			}
			ws, wv := streamSeries(t, whole)
			gs, gv := streamSeries(t, dir)
			if !slices.Equal(gs, ws) || !slices.Equal(gv, wv) {
				t.Errorf("metrics.jsonl: steps %v validations %v; the uninterrupted run's %v %v", gs, gv, ws, wv)
			}
			t.Logf("%s: killed at steps %v; final adapter sha256 %s… equals the uninterrupted run's", c.method, kills, want[:12])
		})
	}
}

// runUntilStep runs perch train in a helper process; with kill > 0 it sends
// SIGKILL as soon as step kill is reported. It returns the last step seen.
func runUntilStep(t *testing.T, args []string, kill int) int {
	t.Helper()
	raw, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestTrainKill9Helper$", "-test.count=1")
	cmd.Env = append(os.Environ(), trainKillEnv+"="+string(raw))
	out, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	last := 0
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var v struct {
			Type string `json:"type"`
			Step int    `json:"step"`
		}
		json.Unmarshal(sc.Bytes(), &v)
		if v.Type == "step" {
			last = v.Step
			if last == kill {
				cmd.Process.Signal(syscall.SIGKILL)
				break
			}
		}
	}
	err := cmd.Wait()
	if kill == 0 && err != nil {
		t.Fatalf("perch train %v: %v: %s", args, err, stderr.String())
	}
	return last
}

// checkAfterKill: the top-level adapter loads and answers; every checkpoint
// metrics.json lists loads.
func checkAfterKill(t *testing.T, dir string, step int) {
	t.Helper()
	if _, err := lora.Load(dir); err != nil {
		t.Fatalf("after the kill at step %d the top-level adapter does not load: %v", step, err)
	}
	if step%10 == 3 { // perch ask is the slow part: every few kills
		if ids := askIDs(t, dir); len(ids) == 0 {
			t.Fatalf("after the kill at step %d the top-level adapter does not answer", step)
		}
	}
	m, err := train.ReadMetrics(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return
		}
		t.Fatalf("after the kill at step %d: %v", step, err)
	}
	for _, c := range m.Checkpoints {
		if _, err := lora.Load(filepath.Join(dir, c.Path)); err != nil {
			t.Fatalf("after the kill at step %d metrics.json names %s, which does not load: %v", step, c.Path, err)
		}
	}
}

func fileSHA(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// streamSeries reads metrics.jsonl: the steps of the step lines in order,
// and the validations as "step:loss".
func streamSeries(t *testing.T, dir string) (steps []int, vals []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, train.StreamFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var v struct {
			Type    string  `json:"type"`
			Step    int     `json:"step"`
			ValLoss float64 `json:"val_loss"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("metrics.jsonl line %q: %v", l, err)
		}
		switch v.Type {
		case "step":
			steps = append(steps, v.Step)
		case "validation":
			vals = append(vals, fmt.Sprintf("%d:%v", v.Step, v.ValLoss))
		}
	}
	return steps, vals
}

// TestTrainStopSignals: SIGTERM and SIGHUP stop perch train at a step
// boundary as Ctrl-C (SIGINT) does: exit 0, the same "stopped after N
// steps" message, the adapter saved and continuable.
func TestTrainStopSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("starts perch train three times; skipped with -short")
	}
	data := t.TempDir()
	writeJSONL(t, data, "train.jsonl", teachRows(4)...)
	said := map[string]string{}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		dir := filepath.Join(t.TempDir(), "adapter")
		args := []string{"--model", tinyModel, "--backend", "go", "--data", data, "--iters", "1000", "--batch-size", "1",
			"--lora-rank", "2", "--save-every", "0", "--adapter-path", dir}
		raw, _ := json.Marshal(args)
		cmd := exec.Command(os.Args[0], "-test.run=^TestTrainKill9Helper$", "-test.count=1")
		cmd.Env = append(os.Environ(), trainKillEnv+"="+string(raw))
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
		sc := bufio.NewScanner(out)
		var last string
		sent := false
		for sc.Scan() {
			last = sc.Text()
			if !sent && strings.HasPrefix(last, "training ") {
				time.Sleep(300 * time.Millisecond) // mid-run
				cmd.Process.Signal(sig)
				sent = true
			}
		}
		err := cmd.Wait()
		timer.Stop()
		if err != nil {
			t.Fatalf("%v: exit %v (last line %q)", sig, err, last)
		}
		var steps int
		if _, err := fmt.Sscanf(last, "stopped after %d steps", &steps); err != nil || steps >= 1000 {
			t.Fatalf("%v: the run ended with %q", sig, last)
		}
		if st, err := train.ReadState(dir); err != nil || st.Step != steps {
			t.Fatalf("%v: the saved state after %d steps: %+v %v", sig, steps, st, err)
		}
		said[sig.String()] = strings.Replace(strings.Replace(last, dir, "DIR", 1), fmt.Sprint(steps), "N", 1)
	}
	if said["terminated"] != said["interrupt"] || said["hangup"] != said["interrupt"] {
		t.Errorf("the signals end with different messages: %q", said)
	}
	t.Logf("every signal: %q", said["terminated"])
}
