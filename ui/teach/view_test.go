package teach

import (
	"fmt"
	"strings"
	"testing"

	"perch/ui"
	"perch/ui/internal/fake"
)

// open shows the Teach page and waits for its checks to settle.
func open(h *fake.Env) *View {
	v := NewView(h.Env, h.Win)
	h.Show(v.Root)
	v.Reload()
	settle(h, v)
	return v
}

// settle waits until the newest form check has come back.
func settle(h *fake.Env, v *View) {
	h.Loop.Until(h.T, "the Teach page's check", func() bool { return v.Checked == v.Checking.Load() })
}

func TestTeachRefusesNothingToTrainOn(t *testing.T) {
	h := fake.NewEnv(t)
	h.Teacher.Summary = ui.DataSummary{Examples: 3, Unpaired: 2}
	v := open(h)
	if v.selectedMethod() != ui.MethodDPO {
		t.Fatalf("default method %q", v.selectedMethod())
	}
	if !v.Problem.Visible() || !strings.Contains(v.Problem.Text, "2 disliked answers have no better version") ||
		!strings.Contains(v.Problem.Text, `switch to "Examples (SFT)"`) {
		t.Fatalf("problem = %q (visible %v)", v.Problem.Text, v.Problem.Visible())
	}
	if !v.Start.Disabled() {
		t.Fatal("Start enabled with nothing to train on")
	}
	if v.dataInfo.Text != "3 examples · 0 pairs · 2 dislikes without a better version" {
		t.Fatalf("data line %q", v.dataInfo.Text)
	}
	// Examples are enough for SFT.
	v.method.SetSelected(presetFor(ui.MethodSFT).Label)
	settle(h, v)
	if v.Problem.Visible() || v.Start.Disabled() {
		t.Fatalf("SFT with 3 examples refused: %q", v.Problem.Text)
	}
	if !strings.Contains(v.Estimate.Text, "About 7 min · needs 3.0 GB of the 16.0 GB") {
		t.Fatalf("estimate %q", v.Estimate.Text)
	}
	if v.Fields["steps"].Text != "20" { // about three passes over 3 rows, at least 20
		t.Fatalf("suggested steps %q", v.Fields["steps"].Text)
	}
	if v.Fields["lr"].Text != fmt.Sprint(presetFor(ui.MethodSFT).LR) {
		t.Fatalf("SFT's learning rate did not follow the preset: %q", v.Fields["lr"].Text)
	}
	// No source at all, and bad numbers, are named.
	v.fromFeedback.SetChecked(false)
	v.Fields["ratio"].SetText("0.5")
	settle(h, v)
	if !strings.Contains(v.Problem.Text, "choose what to learn from") || !strings.Contains(v.Problem.Text, "LoRA+ ratio must be a number from 1") {
		t.Fatalf("problem = %q", v.Problem.Text)
	}
	if !v.Start.Disabled() {
		t.Fatal("Start enabled without a source")
	}
}

func TestTeachRefusesWhenItWillNotFit(t *testing.T) {
	h := fake.NewEnv(t)
	h.Teacher.Summary = ui.DataSummary{Pairs: 4}
	h.Teacher.Estimated = ui.TrainEstimate{Fits: false, Memory: 30 << 30, Available: 16 << 30,
		Reason: "Training Gemma-4 E2B this way needs about 30.0 GB and this computer can give 16.0 GB. Try a maximum length of 1024."}
	v := open(h)
	if !v.Problem.Visible() || !strings.HasPrefix(v.Problem.Text, "Training Gemma-4 E2B this way needs about 30.0 GB") {
		t.Fatalf("problem = %q", v.Problem.Text)
	}
	if !v.Start.Disabled() {
		t.Fatal("Start enabled for a plan that does not fit")
	}
}

func TestAdaptersListed(t *testing.T) {
	h := fake.NewEnv(t)
	v := open(h)
	all := strings.Join(fake.Texts(v.adapters.root), "|")
	for _, want := range []string{"my-style", "DPO on Gemma-4 E2B", "200 steps", "best validation loss 1.234 (checkpoint at step 150)", "rank 8", "12.0 MB", "legal", "for Gemma-4 31B"} {
		if !strings.Contains(all, want) {
			t.Fatalf("adapters list lacks %q: %s", want, all)
		}
	}
}
