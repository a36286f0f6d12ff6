package teach

import (
	"bufio"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"perch/app/history"
	"perch/engine/lora"
	"perch/ui"
)

const kill9Env = "PERCH_TEACH_KILL9_DIR"

// TestTeachKill9Helper is the process the kill -9 test kills: it resumes
// the interrupted run from its checkpoint (or starts one), prints
// "TRAINING <run> <step>" once it trains, and "DONE" when the run ends.
func TestTeachKill9Helper(t *testing.T) {
	dir := os.Getenv(kill9Env)
	if dir == "" {
		t.Skip("helper process for TestRunSurvivesKill9 (runs only when that test starts it)")
	}
	f := newFixture(t, dir)
	f.trainer.every = 2 * time.Millisecond
	runs, _ := f.svc.Runs()
	var r ui.TrainRun
	var err error
	switch {
	case len(runs) == 0:
		f.pairs(4)
		plan := defaultPlan()
		plan.Steps = 3000
		r, err = f.svc.Start(plan)
	case runs[0].State == ui.RunInterrupted && runs[0].LastCheckpoint > 0:
		r, err = f.svc.ResumeFromCheckpoint(runs[0].ID)
	case runs[0].State == ui.RunInterrupted:
		err = fmt.Errorf("interrupted before a checkpoint: %+v", runs[0])
	default:
		fmt.Println("DONE", runs[0].State)
		return
	}
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(3)
	}
	fmt.Println("RESUMED", r.ID, r.Step)
	said := false
	for u := range f.updates {
		if u.Run.State == ui.RunTraining && (r.Step > 0 || u.Run.LastCheckpoint > 0) && !said {
			fmt.Println("TRAINING", u.Run.ID, u.Run.Step)
			said = true
		}
		if !u.Run.State.Active() {
			fmt.Println("DONE", u.Run.State, u.Run.Err)
			return
		}
	}
}

// TestRunSurvivesKill9 kills a training process with SIGKILL at random
// (seeded) moments, 24 times. After each kill: the database passes
// integrity_check, every recorded checkpoint loads, the run shows as
// interrupted, and the next process resumes it from its last checkpoint;
// at the end the run finishes and its adapter is in the library.
func TestRunSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("kill -9 loop takes about 20 s; skipped with -short")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewSource(7))
	const kills = 24
	lastStep, checked := -1, 0
	for i := 0; ; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTeachKill9Helper$", "-test.count=1")
		cmd.Env = append(os.Environ(), kill9Env+"="+dir)
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 256)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		var resumedAt = -1
		done := false
		wait := time.After(60 * time.Second)
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
					fmt.Sscanf(l, "RESUMED %s %d", new(string), &resumedAt)
				case strings.HasPrefix(l, "DONE"):
					done = true
				case strings.HasPrefix(l, "TRAINING") && i < kills:
					time.Sleep(time.Duration(rng.Intn(400)) * time.Millisecond)
					cmd.Process.Signal(syscall.SIGKILL)
				}
			case <-wait:
				cmd.Process.Kill()
				t.Fatalf("process %d: no progress in 60 s", i)
			}
		}
		cmd.Wait()
		if i > 0 && resumedAt != lastStep {
			t.Fatalf("process %d resumed at step %d, the last checkpoint was step %d", i, resumedAt, lastStep)
		}
		store, rec, err := history.Open(dir)
		if err != nil || rec.Quarantined != "" {
			t.Fatalf("after kill %d: reopen: %v (quarantined %q)", i, err, rec.Quarantined)
		}
		if res, err := store.IntegrityCheck(); err != nil || res != "ok" {
			t.Fatalf("after kill %d: integrity_check = %q, %v", i, res, err)
		}
		runs, _ := store.Runs()
		if len(runs) != 1 {
			t.Fatalf("after kill %d: %d runs", i, len(runs))
		}
		cs, _ := store.Checkpoints(runs[0].ID)
		for _, c := range cs {
			if _, err := lora.Load(c.Path); err != nil {
				t.Fatalf("after kill %d: recorded checkpoint %d does not load: %v", i, c.Step, err)
			}
			checked++
		}
		if len(cs) > 0 {
			lastStep = cs[len(cs)-1].Step
		}
		if done {
			if runs[0].State != history.RunDone || runs[0].AdapterID == "" {
				t.Fatalf("the run ended %q without its adapter", runs[0].State)
			}
			store.Close()
			if i < kills {
				t.Fatalf("the run finished after %d kills; make it longer", i)
			}
			t.Logf("%d kills; %d checkpoint loads checked; the run resumed each time and finished", kills, checked)
			return
		}
		// The next Open (the next process) marks it interrupted; here the state is still "training".
		if n, _ := store.InterruptRuns(); n != 1 {
			t.Fatalf("after kill %d: the run was not left going (state %q)", i, runs[0].State)
		}
		store.Close()
		if len(cs) == 0 {
			t.Fatalf("kill %d landed before the first checkpoint: the seed's timing does not exercise resuming", i)
		}
	}
}
