package teach

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"perch/app/history"
	"perch/app/hub"
	"perch/engine/lora"
	"perch/ui"
)

// pairs stores n corrected answers (each a pair and an example).
func (f *fixture) pairs(n int) {
	for i := 0; i < n; i++ {
		c, _ := f.store.CreateConversation("c", "")
		a := f.chatTurn(c.ID, "Say something kind", "Whatever.")
		f.correct(&a, "You are doing great today.")
	}
}

func TestRunRecordsMetricsCheckpointsAndAdapter(t *testing.T) {
	f := newFixture(t, "")
	f.pairs(5)
	var mu sync.Mutex
	var notes []string
	f.svc.o.Notify = func(title, body string) { mu.Lock(); notes = append(notes, title+": "+body); mu.Unlock() }
	r, err := f.svc.Start(defaultPlan())
	if err != nil {
		t.Fatal(err)
	}
	if r.State != ui.RunPreparing || r.Steps != 20 || r.BaseName != "Tiny Gemma" {
		t.Fatalf("started %+v", r)
	}
	if _, err := f.svc.Start(defaultPlan()); err == nil {
		t.Fatal("a second run started beside the first")
	}
	done := f.until("the run to finish", func(r ui.TrainRun) bool { return !r.State.Active() })
	if done.State != ui.RunDone || done.Step != 20 || done.AdapterID == "" || done.BestStep != 20 || done.LastCheckpoint != 20 {
		t.Fatalf("finished %+v", done)
	}
	pts, _ := f.svc.Points(r.ID)
	if len(pts) != 20 || pts[0].Loss <= pts[19].Loss || !math.IsNaN(pts[0].ValLoss) || pts[9].ValLoss != pts[9].Loss+0.05 || pts[4].Margin != 0.05 {
		t.Fatalf("points %+v", pts)
	}
	cs, _ := f.store.Checkpoints(r.ID)
	if len(cs) != 4 || cs[0].Step != 5 {
		t.Fatalf("checkpoints %+v", cs)
	}
	for _, c := range cs {
		if _, err := lora.Load(c.Path); err != nil {
			t.Fatalf("checkpoint %d does not load: %v", c.Step, err)
		}
	}
	job := f.trainer.job(0)
	if job.Method != "dpo" || job.Iters != 20 || job.LoRAPlus != 16 || job.SaveEvery != 5 || job.Resume != "" {
		t.Fatalf("job %+v", job)
	}
	as, _ := f.svc.Adapters()
	if len(as) != 1 || as[0].Name != "my-style" || as[0].Method != ui.MethodDPO || as[0].Steps != 20 || as[0].BestStep != 20 ||
		as[0].Size == 0 || as[0].Rank != 8 || as[0].Base != "tiny" { // the plan's rank: the library does not read the adapter back
		t.Fatalf("library %+v", as)
	}
	mu.Lock()
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "Training finished: my-style is ready") {
		t.Fatalf("notifications %q", notes)
	}
	mu.Unlock()
	// A second run of the same name is refused before it starts, with a
	// free name offered (it was saved as my-style-2 under a header that
	// said my-style); under that name it runs.
	_, err = f.svc.Start(defaultPlan())
	if want := "you already have an adapter called my-style for this model: choose another name, such as my-style-2"; err == nil || err.Error() != want {
		t.Fatalf("a taken name: %v", err)
	}
	second := defaultPlan()
	second.Name = "my-style-2"
	if _, err := f.svc.Start(second); err != nil {
		t.Fatal(err)
	}
	if r2 := f.until("the second run", func(r ui.TrainRun) bool { return !r.State.Active() }); r2.State != ui.RunDone {
		t.Fatalf("second run %+v", r2)
	}
	if as, _ := f.svc.Adapters(); len(as) != 2 || as[0].Name != "my-style-2" {
		t.Fatalf("library %+v", as)
	}
}

func TestPauseResumeStop(t *testing.T) {
	f := newFixture(t, "")
	f.pairs(3)
	f.trainer.hold = make(chan struct{})
	plan := defaultPlan()
	plan.Steps = 1000
	r, err := f.svc.Start(plan)
	if err != nil {
		t.Fatal(err)
	}
	f.until("training", func(r ui.TrainRun) bool { return r.State == ui.RunTraining })
	if err := f.svc.Pause(r.ID); err != nil {
		t.Fatal(err)
	}
	close(f.trainer.hold)
	f.until("paused", func(r ui.TrainRun) bool { return r.State == ui.RunPaused })
	if err := f.svc.Resume(r.ID); err != nil {
		t.Fatal(err)
	}
	f.until("steps again", func(r ui.TrainRun) bool { return r.State == ui.RunTraining && r.Step > 0 })
	if err := f.svc.Stop(r.ID); err != nil {
		t.Fatal(err)
	}
	stopped := f.until("stopped", func(r ui.TrainRun) bool { return !r.State.Active() })
	if stopped.State != ui.RunStopped || stopped.AdapterID == "" || stopped.Step >= 1000 {
		t.Fatalf("after stop %+v", stopped)
	}
	if err := f.svc.Pause(r.ID); err == nil {
		t.Fatal("a stopped run took Pause")
	}
}

func TestInterruptedRunResumesFromItsCheckpoint(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, dir)
	f.pairs(3)
	// A run killed after its checkpoint at step 10 of 30: the record says
	// training, metrics to step 13, the checkpoint complete on disk.
	plan := defaultPlan()
	plan.Steps = 30
	rec := history.TrainRun{ID: "run-x", Name: "my-style", Base: "tiny", BaseName: "Tiny Gemma", Method: "dpo",
		Plan:  `{"Base":"tiny","Name":"my-style","Method":"dpo","Steps":30,"Rank":8,"BatchSize":1,"MaxSeqLen":512,"LearningRate":1e-5,"LoRAPlusRatio":16,"Source":{"Feedback":true}}`,
		State: history.RunTraining, Step: 13, Steps: 30, BestVal: math.NaN()}
	rec.Dir = f.svc.runDir(rec.ID)
	f.store.CreateRun(&rec)
	if err := f.svc.ExportDataset(plan, filepath.Join(rec.Dir, "data")); err != nil { // a run of before rows went straight through
		t.Fatal(err)
	}
	ckpt := filepath.Join(rec.Dir, "part-0", "checkpoints", "step-00010")
	saveFake(ckpt, 10)
	f.store.AddCheckpoint(rec.ID, history.Checkpoint{Step: 10, Path: ckpt, ValLoss: 0.5})
	// A later checkpoint whose files never completed is not recorded (so not offered).
	os.MkdirAll(filepath.Join(rec.Dir, "part-0", "checkpoints", "step-00020"), 0o755)
	var ms []history.Metric
	for s := 1; s <= 13; s++ {
		ms = append(ms, history.Metric{Step: s, Loss: 1, ValLoss: math.NaN(), Margin: math.NaN()})
	}
	f.store.AddMetrics(rec.ID, ms)
	f.store.Close()

	g := newFixture(t, dir) // Perch starts again

	// The resumed segment never beats the checkpoint at step 10.
	g.trainer.val = func(int, float64) float64 { return 0.6 }
	runs, _ := g.svc.Runs()
	if len(runs) != 1 || runs[0].State != ui.RunInterrupted || runs[0].LastCheckpoint != 10 {
		t.Fatalf("after restart %+v", runs)
	}
	r, err := g.svc.ResumeFromCheckpoint(rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Step != 10 || r.BestVal != 0.5 {
		t.Fatalf("resumed %+v", r)
	}
	done := g.until("the resumed run", func(r ui.TrainRun) bool { return !r.State.Active() })
	if done.State != ui.RunDone || done.Step != 30 || done.BestStep != 10 || done.BestVal != 0.5 {
		t.Fatalf("finished %+v", done)
	}
	// The library's best is the earlier segment's checkpoint, and export writes it.
	if as, _ := g.svc.Adapters(); len(as) != 1 || as[0].BestStep != 10 || exportedStep(t, g, as[0].ID) != 10 {
		t.Fatalf("library %+v", as)
	}
	j := g.trainer.job(0)
	if j.Resume != ckpt || j.Iters != 20 || !strings.HasSuffix(j.AdapterDir, "part-10") || !strings.HasSuffix(j.Data, "data") {
		t.Fatalf("resumed job %+v", j)
	}
	pts, _ := g.svc.Points(rec.ID)
	if len(pts) != 30 || pts[10].Step != 11 || pts[10].Loss == 1 {
		t.Fatalf("points after resume: %d, step 11 = %+v", len(pts), pts[10])
	}
	if _, err := g.svc.ResumeFromCheckpoint(rec.ID); err == nil {
		t.Fatal("a finished run resumed")
	}
}

func TestEstimateFitsOrSaysWhy(t *testing.T) {
	f := newFixture(t, "")
	plan := defaultPlan()
	if _, err := f.svc.Estimate(plan); err == nil || !strings.Contains(err.Error(), "nothing to train on") {
		t.Fatalf("empty data: %v", err)
	}
	f.pairs(4)
	e, err := f.svc.Estimate(plan)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Fits || e.Memory <= 0 || e.Duration <= 0 || e.Rows != 3 || e.ValRows != 1 || !strings.Contains(e.Basis, "rough guess") {
		t.Fatalf("estimate %+v", e)
	}
	// The budget is the Models page's: what the machine can give, not
	// what is free this minute, which only makes the fit tight.
	capacity, _ := hub.Capacity(f.budget)
	if e.Available != capacity || e.Tight {
		t.Fatalf("available %d, the Models page's budget %d; tight %v", e.Available, capacity, e.Tight)
	}
	if runtime.GOOS == "linux" { // a Mac's budget is the GPU's working set, never busy
		f.budget.Usable = e.Memory / 2
		if e, _ := f.svc.Estimate(plan); !e.Fits || !e.Tight {
			t.Fatalf("a busy machine: %+v", e)
		}
	}
	f.budget.TotalRAM, f.budget.Usable = e.Memory/2, e.Memory/2 // a machine too small
	e2, _ := f.svc.Estimate(plan)
	if e2.Fits || !strings.Contains(e2.Reason, "Training Tiny Gemma on rows of up to") || !strings.Contains(e2.Reason, "this computer can give") {
		t.Fatalf("too small a budget: %+v", e2)
	}
	if _, err := f.svc.Start(plan); err == nil || err.Error() != e2.Reason {
		t.Fatalf("Start did not refuse with the reason: %v", err)
	}
	plan.BatchSize = 8
	f.budget.TotalRAM, f.budget.Usable = 16<<30, 8<<30
	if _, err := f.svc.Estimate(plan); err == nil || !strings.Contains(err.Error(), "fewer than the batch size") {
		t.Fatalf("batch larger than the data: %v", err)
	}
}

func TestLibraryImportExportRenameDelete(t *testing.T) {
	f := newFixture(t, "")
	src := t.TempDir()
	saveFake(src, 1)
	if _, err := f.svc.ImportAdapter(src); err == nil || !strings.Contains(err.Error(), "names no model") {
		t.Fatalf("import without a model: %v", err)
	}
	// mlx-lm writes the base it trained as "model".
	raw, _ := os.ReadFile(filepath.Join(src, lora.ConfigFile))
	raw = []byte(strings.Replace(string(raw), "{", `{"model": "mlx-community/tiny",`, 1))
	os.WriteFile(filepath.Join(src, lora.ConfigFile), raw, 0o644)
	a, err := f.svc.ImportAdapter(src)
	if err != nil {
		t.Fatal(err)
	}
	if a.Base != "tiny" || a.Rank != 2 || a.Size == 0 {
		t.Fatalf("imported %+v", a)
	}
	if err := f.svc.RenameAdapter(a.ID, "bad+name"); err == nil {
		t.Fatal("a name with + accepted")
	}
	if err := f.svc.RenameAdapter(a.ID, "legal"); err != nil {
		t.Fatal(err)
	}
	out, err := f.svc.ExportAdapter(a.ID, t.TempDir())
	if err != nil || filepath.Base(out) != "legal" {
		t.Fatalf("export %q, %v", out, err)
	}
	if _, err := lora.Load(out); err != nil {
		t.Fatalf("the export does not load: %v", err)
	}
	dir := f.svc.AdapterDir(a.ID)
	if err := f.svc.DeleteAdapter(a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatal("files left after delete")
	}
	if as, _ := f.svc.Adapters(); len(as) != 0 {
		t.Fatalf("library %+v", as)
	}
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, lora.ConfigFile), []byte(`{"lora_parameters": {"rank": 0}}`), 0o644)
	if _, err := f.svc.ImportAdapter(bad); err == nil {
		t.Fatal("a broken adapter imported")
	}
}

// TestRunSeed: a run's seed comes from its ID (two runs differ) unless the
// service is given one (perch gui -seed), which every run then uses.
func TestRunSeed(t *testing.T) {
	plan := defaultPlan()
	a, b := job(plan, "run-a", trainData{}, "", "", 10, 0, nil), job(plan, "run-b", trainData{}, "", "", 10, 0, nil)
	if a.Seed == b.Seed {
		t.Fatalf("two runs share seed %d", a.Seed)
	}
	f := newFixture(t, "")
	f.pairs(5)
	seed := uint64(7)
	f.svc.o.Seed = &seed
	if _, err := f.svc.Start(defaultPlan()); err != nil {
		t.Fatal(err)
	}
	if r := f.until("the run to finish", func(r ui.TrainRun) bool { return !r.State.Active() }); r.State != ui.RunDone {
		t.Fatalf("finished %+v", r)
	}
	if got := f.trainer.job(0).Seed; got != seed {
		t.Fatalf("the run trained with seed %d, not the service's %d", got, seed)
	}
}
