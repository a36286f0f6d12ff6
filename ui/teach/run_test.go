package teach

import (
	"math"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"perch/ui"
	"perch/ui/internal/fake"
)

func TestTeachRunChartUpdatesAndStops(t *testing.T) {
	h := fake.NewEnv(t)
	h.Teacher.Summary = ui.DataSummary{Pairs: 6, Examples: 2,
		Preview: []ui.DataPreview{{Prompt: "Capital?", Chosen: "Paris.", Rejected: "Lyon.", Origin: "your correction"}}}
	v := open(h)
	if v.Start.Disabled() {
		t.Fatalf("cannot start: %q", v.Problem.Text)
	}
	v.Fields["steps"].SetText("50")
	settle(h, v)
	test.Tap(v.Start)
	h.Loop.Until(t, "the run shown", func() bool { return v.Run.Shown && v.Run.Run.ID != "" })
	if p := h.Teacher.Started[0]; p.Method != ui.MethodDPO || p.Steps != 50 || p.LoRAPlusRatio != ui.DefaultLoRAPlusRatio || p.Base != "e2b" || !p.Source.Feedback {
		t.Fatalf("started %+v", p)
	}
	settle(h, v)
	if !v.Start.Disabled() || !strings.Contains(v.Estimate.Text, "One run at a time") {
		t.Fatalf("a second run can start beside the first: %q", v.Estimate.Text)
	}
	run := v.Run.Run
	run.State, run.Steps = ui.RunTraining, 50
	for step := 1; step <= 30; step++ {
		run.Step, run.TokensPerSec, run.ETA = step, 812, time.Duration(50-step)*10*time.Second
		pt := ui.TrainPoint{Step: step, Loss: 0.69 - 0.01*float64(step), ValLoss: math.NaN(), Margin: 0.02 * float64(step)}
		if step == 30 { // the method names its chart's metric (train.Objective.Metrics)
			pt.MarginLabel = "reward (signed by label)"
		}
		if step%10 == 0 {
			pt.ValLoss = 0.7 - 0.01*float64(step)
		}
		h.Teacher.Emit(ui.TrainUpdate{Run: run, Points: []ui.TrainPoint{pt}})
	}
	h.Loop.Until(t, "30 points on the chart", func() bool { return v.Run.Loss.Len(0) == 30 })
	if v.Run.Loss.Len(1) != 3 || v.Run.margin.Len(0) != 30 || !v.Run.margin.Visible() {
		t.Fatalf("validation %d points, margin %d", v.Run.Loss.Len(1), v.Run.margin.Len(0))
	}
	if v.Run.margin.Title != "Reward (signed by label)" {
		t.Fatalf("margin chart titled %q, not by the method's label", v.Run.margin.Title)
	}
	if got := v.Run.State.Text; got != "Training · step 30 of 50 · 812 tokens/s · about 3 min left" {
		t.Fatalf("state line %q", got)
	}
	if v.Run.bar.Value != 0.6 || !v.Run.pause.Visible() || v.Run.resume.Visible() {
		t.Fatalf("bar %v pause %v resume %v", v.Run.bar.Value, v.Run.pause.Visible(), v.Run.resume.Visible())
	}
	// A chat between steps shows as a pause for it.
	run.Yielding = true
	h.Teacher.Emit(ui.TrainUpdate{Run: run})
	h.Loop.Until(t, "the chat pause note", func() bool {
		return v.Run.note.Visible() && strings.Contains(v.Run.note.Text, "Paused while Perch answers your chat")
	})
	// Pause, resume, then stop through the confirmation.
	test.Tap(v.Run.pause)
	h.Loop.Until(t, "paused", func() bool { return v.Run.Run.State == ui.RunPaused && v.Run.resume.Visible() })
	test.Tap(v.Run.resume)
	h.Loop.Until(t, "resumed", func() bool { return v.Run.Run.State == ui.RunTraining })
	test.Tap(v.Run.Stop)
	yes := fake.FindButton(h.Win.Canvas().Overlays().Top(), "Stop training")
	if yes == nil {
		t.Fatal("no confirmation for Stop")
	}
	test.Tap(yes)
	h.Loop.Until(t, "stopped", func() bool { return v.Run.Run.State == ui.RunStopped })
	if got := strings.Join(h.Teacher.Log(), ","); got != "pause r1,resume r1,stop r1" {
		t.Fatalf("controls sent %q", got)
	}
	if v.Run.Stop.Visible() || v.Run.pause.Visible() || !strings.HasPrefix(v.Run.State.Text, "Stopped at step 30 of 50") {
		t.Fatalf("after stop: state %q", v.Run.State.Text)
	}
	if v.Run.Loss.Len(0) != 30 {
		t.Fatal("stopping lost the chart's points")
	}
}

// A run's stored points read back after newer ones arrived live do not
// wipe those off the chart (the read and the updates race in the app).
func TestStoredPointsKeepLiveOnes(t *testing.T) {
	h := fake.NewEnv(t)
	var reads []func()
	h.Run = func(f func()) { reads = append(reads, f) } // the read waits until the test runs it
	p := newRunPanel(h.Env, h.Win)
	r := ui.TrainRun{ID: "r1", State: ui.RunTraining, Steps: 10}
	point := func(step int) ui.TrainPoint {
		return ui.TrainPoint{Step: step, Loss: 1 / float64(step), ValLoss: math.NaN(), Margin: math.NaN()}
	}
	h.Teacher.Emit(ui.TrainUpdate{Run: r, Points: []ui.TrainPoint{point(1)}}) // stored before the page follows the run
	p.Follow(r)
	p.push(ui.TrainUpdate{Run: r, Points: []ui.TrainPoint{point(2), point(3)}}) // live, before the read
	h.Loop.Drain()
	for _, read := range reads {
		read()
	}
	h.Loop.Drain()
	if n := p.Loss.Len(0); n != 3 {
		t.Fatalf("the chart has %d points after the stored ones came back, want 3 (1 stored, 2 live)", n)
	}
}
