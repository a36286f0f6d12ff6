package history

import (
	"math"
	"testing"
)

func TestRatingsFollowVersions(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	c, _ := s.CreateConversation("Birds", "")
	u, a := answerT(t, s, c.ID, "Name a bird", "A robin.")
	if err := s.SetRating(u.ID, 1, 1); err == nil {
		t.Fatal("a user turn took a rating")
	}
	if err := s.SetRating(a.ID, 1, 2); err == nil {
		t.Fatal("rating 2 accepted")
	}
	if err := s.SetRating(a.ID, 1, -1); err != nil {
		t.Fatal(err)
	}
	// A correction is a new version; the old one keeps its thumbs down.
	a.Text, a.Origin = "A blackbird.", OriginEdited
	if err := s.NewVersion(&a); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRating(a.ID, a.Version, 1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openT(t, dir)
	got, err := s.Ratings(c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got[VersionKey{a.ID, 1}] != -1 || got[VersionKey{a.ID, 2}] != 1 || len(got) != 2 {
		t.Fatalf("ratings %v", got)
	}
	// Switching versions leaves the ratings where they were.
	if err := s.UseVersion(a.ID, 1); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Ratings(c.ID); got[VersionKey{a.ID, 1}] != -1 {
		t.Fatalf("after switching: %v", got)
	}
	if err := s.SetRating(a.ID, 2, 0); err != nil {
		t.Fatal(err)
	}
	taught, err := s.TaughtAnswers()
	if err != nil || len(taught) != 1 || taught[0].MessageID != a.ID || taught[0].Seq != 2 {
		t.Fatalf("taught %+v, %v (the edited version alone keeps it taught)", taught, err)
	}
	// An answer nobody rated or edited is not taught.
	answerT(t, s, c.ID, "Another?", "A wren.")
	if taught, _ := s.TaughtAnswers(); len(taught) != 1 {
		t.Fatalf("unrated answer listed: %+v", taught)
	}
}

func TestConversationAdapterTakesTheChoiceOnce(t *testing.T) {
	s := openT(t, t.TempDir())
	c, _ := s.CreateConversation("New", "")
	if a, err := s.ConversationAdapter(c.ID, "ad1"); err != nil || a != "ad1" {
		t.Fatalf("first use = %q, %v", a, err)
	}
	// Later changes of the app's choice do not move it.
	if a, _ := s.ConversationAdapter(c.ID, "ad2"); a != "ad1" {
		t.Fatalf("moved to %q", a)
	}
	if err := s.SetConversationAdapter(c.ID, ""); err != nil {
		t.Fatal(err)
	}
	if a, _ := s.ConversationAdapter(c.ID, "ad2"); a != "" {
		t.Fatalf("explicit none became %q", a)
	}
	ad := Adapter{Name: "my-style", Dir: "x", Base: "m", BestVal: math.NaN()}
	if err := s.PutAdapter(&ad); err != nil {
		t.Fatal(err)
	}
	s.SetConversationAdapter(c.ID, ad.ID)
	if err := s.DeleteAdapter(ad.ID); err != nil {
		t.Fatal(err)
	}
	if a, _ := s.ConversationAdapter(c.ID, "ad2"); a != "" {
		t.Fatalf("deleted adapter still used: %q", a)
	}
	if _, err := s.ConversationAdapter("nope", ""); err != ErrNotFound {
		t.Fatalf("unknown conversation: %v", err)
	}
}

func TestRunsMetricsAndCheckpoints(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	r := TrainRun{Name: "my-style", Base: "m", Method: "dpo", Plan: "{}", Dir: "d", State: RunTraining, Steps: 20, BestVal: math.NaN()}
	if err := s.CreateRun(&r); err != nil {
		t.Fatal(err)
	}
	if err := s.AddMetrics(r.ID, []Metric{{Step: 1, Loss: 0.7, ValLoss: math.NaN(), Margin: 0.1, Tokens: 30},
		{Step: 2, Loss: 0.6, ValLoss: math.NaN(), Margin: 0.2, Tokens: 28}}); err != nil {
		t.Fatal(err)
	}
	// Validation of step 2 arrives on its own and merges into the row.
	if err := s.AddMetrics(r.ID, []Metric{{Step: 2, Loss: math.NaN(), ValLoss: 0.65, Margin: math.NaN()}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddCheckpoint(r.ID, Checkpoint{Step: 2, Path: "d/checkpoints/step-00002", ValLoss: 0.65}); err != nil {
		t.Fatal(err)
	}
	r.Step, r.BestVal, r.BestStep = 2, 0.65, 2
	if err := s.UpdateRun(&r); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openT(t, dir)
	if n, err := s.InterruptRuns(); err != nil || n != 1 {
		t.Fatalf("interrupted %d, %v", n, err)
	}
	got, err := s.Run(r.ID)
	if err != nil || got.State != RunInterrupted || got.Step != 2 || got.BestVal != 0.65 {
		t.Fatalf("run %+v, %v", got, err)
	}
	ms, _ := s.Metrics(r.ID)
	if len(ms) != 2 || ms[1].Loss != 0.6 || ms[1].ValLoss != 0.65 || ms[1].Margin != 0.2 || ms[1].Tokens != 28 || !math.IsNaN(ms[0].ValLoss) {
		t.Fatalf("metrics %+v", ms)
	}
	cs, _ := s.Checkpoints(r.ID)
	if len(cs) != 1 || cs[0].Step != 2 || cs[0].ValLoss != 0.65 {
		t.Fatalf("checkpoints %+v", cs)
	}
	if n, _ := s.InterruptRuns(); n != 0 {
		t.Fatal("a finished run was interrupted again")
	}
	if res, _ := s.IntegrityCheck(); res != "ok" {
		t.Fatal(res)
	}
}
