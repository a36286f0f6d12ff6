package teach_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"perch/app/history"
	"perch/engine/lora"
	"perch/ui"
)

const teachKillEnv = "PERCH_TEACH_KILL9_REAL"

// TestTeachKill9RealHelper is the process TestTeachRunSurvivesKill9 kills:
// the real trainer on the tiny model. It resumes the interrupted run from
// its last checkpoint (or starts one from feedback), prints "TRAINING
// <step>" at its first step and, told to, stops the run after it.
func TestTeachKill9RealHelper(t *testing.T) {
	dir := os.Getenv(teachKillEnv)
	if dir == "" {
		t.Skip("helper process for TestTeachRunSurvivesKill9 (runs only when that test starts it)")
	}
	r := newTeachRig(t, dir)
	runs, _ := r.svc.Runs()
	var run ui.TrainRun
	var err error
	switch {
	case len(runs) == 0:
		r.teachSome(3)
		run, err = r.svc.Start(ui.TrainPlan{Base: "tiny", Name: "my-style", Source: ui.TeachSource{Feedback: true},
			Method: ui.MethodDPO, Rank: 4, Steps: 2000, LearningRate: 1e-5, LoRAPlusRatio: ui.DefaultLoRAPlusRatio,
			ValShare: 0.34, BatchSize: 1, MaxSeqLen: 256, Beta: 0.1, Lambda: 0.1})
	case runs[0].State == ui.RunInterrupted:
		run, err = r.svc.ResumeFromCheckpoint(runs[0].ID)
	default:
		err = fmt.Errorf("the run is %s", runs[0].State)
	}
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(3)
	}
	fmt.Println("RESUMED", run.Step)
	said, stop := false, os.Getenv("PERCH_TEACH_KILL9_STOP") != ""
	for u := range r.updates {
		// A new run says so once its first checkpoint is recorded (a kill
		// before it has nothing to resume from).
		if u.Run.State == ui.RunTraining && u.Run.Step > run.Step && (run.Step > 0 || u.Run.LastCheckpoint > 0) && !said {
			fmt.Println("TRAINING", u.Run.Step)
			said = true
			if stop {
				r.svc.Stop(u.Run.ID)
			}
		}
		if !u.Run.State.Active() {
			fmt.Println("DONE", u.Run.State, u.Run.Err)
			return
		}
	}
}

// TestTeachRunSurvivesKill9 kills the real trainer (tiny model, Go
// backend) with SIGKILL at 20 seeded random moments of a run. After each:
// the history passes integrity_check, every recorded checkpoint loads,
// the run is left to be marked interrupted, and the next process resumes
// from its last checkpoint; a last process stops the run cleanly and its
// adapter loads.
func TestTeachRunSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("kill -9 loop over the real trainer takes about 30 s; skipped with -short")
	}
	if _, err := os.Stat(e2eModel + "/config.json"); err != nil {
		t.Skipf("fixture model %s not present: %v", e2eModel, err)
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewSource(12))
	const kills = 20
	last, loads := -1, 0
	for i := 0; i <= kills; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTeachKill9RealHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), teachKillEnv+"="+dir)
		if i == kills {
			cmd.Env = append(cmd.Env, "PERCH_TEACH_KILL9_STOP=1")
		}
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 64)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		resumed, done := -1, ""
		timeout := time.After(2 * time.Minute)
	read:
		for {
			select {
			case l, ok := <-lines:
				switch {
				case !ok:
					break read
				case strings.HasPrefix(l, "ERR"):
					cmd.Process.Kill()
					t.Fatalf("process %d: %s", i, l)
				case strings.HasPrefix(l, "RESUMED"):
					fmt.Sscanf(l, "RESUMED %d", &resumed)
				case strings.HasPrefix(l, "DONE"):
					done = l
				case strings.HasPrefix(l, "TRAINING") && i < kills:
					// Somewhere in the next 0.1–1.5 s: mid-step, mid-save or between.
					time.Sleep(100*time.Millisecond + time.Duration(rng.Intn(1400))*time.Millisecond)
					cmd.Process.Signal(syscall.SIGKILL)
				}
			case <-timeout:
				cmd.Process.Kill()
				t.Fatalf("process %d made no progress in 2 minutes", i)
			}
		}
		cmd.Wait()
		if i > 0 && resumed != last {
			t.Fatalf("process %d resumed at step %d; the last recorded checkpoint is step %d", i, resumed, last)
		}
		store, rec, err := history.Open(dir)
		if err != nil || rec.Quarantined != "" {
			t.Fatalf("after process %d: reopen: %v (quarantined %q)", i, err, rec.Quarantined)
		}
		if res, err := store.IntegrityCheck(); err != nil || res != "ok" {
			t.Fatalf("after process %d: integrity_check = %q, %v", i, res, err)
		}
		runs, _ := store.Runs()
		cs, _ := store.Checkpoints(runs[0].ID)
		for _, c := range cs {
			if _, err := lora.Load(c.Path); err != nil {
				t.Fatalf("after process %d: recorded checkpoint %d does not load: %v", i, c.Step, err)
			}
			loads++
		}
		if len(cs) == 0 {
			t.Fatalf("process %d was killed before the first checkpoint", i)
		}
		last = cs[len(cs)-1].Step
		if i < kills {
			if done != "" {
				t.Fatalf("process %d finished (%s) before its kill", i, done)
			}
			if n, _ := store.InterruptRuns(); n != 1 {
				t.Fatalf("after kill %d the run was not left going (%s)", i, runs[0].State)
			}
		} else {
			a, err := store.AdapterByID(runs[0].AdapterID)
			if runs[0].State != history.RunStopped || err != nil {
				t.Fatalf("the last process ended %q (%s), adapter %v", runs[0].State, done, err)
			}
			if _, err := lora.Load(a.Dir); err != nil {
				t.Fatalf("the stopped run's adapter does not load: %v", err)
			}
		}
		store.Close()
	}
	// Every process continued the one run exactly (its resume state): one
	// segment folder, its stream one series that says where it resumed.
	parts, _ := filepath.Glob(filepath.Join(dir, "*", "training", "*", "part-*"))
	if len(parts) == 0 {
		parts, _ = filepath.Glob(filepath.Join(dir, "training", "*", "part-*"))
	}
	// (A start that was killed before the next checkpoint is cut from the
	// stream by the next resume, with the steps it took.)
	stream, _ := os.ReadFile(filepath.Join(parts[0], "metrics.jsonl"))
	steps := 0
	for _, l := range strings.Split(strings.TrimSpace(string(stream)), "\n") {
		var v struct {
			Type string `json:"type"`
			Step int    `json:"step"`
		}
		json.Unmarshal([]byte(l), &v)
		if v.Type == "step" {
			if v.Step != steps+1 {
				t.Errorf("the stream's step %d follows step %d", v.Step, steps)
			}
			steps = v.Step
		}
	}
	if len(parts) != 1 || !strings.Contains(string(stream), `"resumed_from_step"`) || steps < last {
		t.Errorf("segments %v; the stream has no resumed start or ends at step %d", parts, steps)
	}
	t.Logf("%d kills of the real trainer; %d checkpoint loads checked; resumed each time at the last checkpoint (step %d), then stopped cleanly", kills, loads, last)
}
