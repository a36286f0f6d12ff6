package teach

import (
	"context"
	"testing"

	"perch/engine/chattemplate"
	"perch/engine/tokenizer"
	"perch/engine/train"
	"perch/engine/trainset"
	"perch/ui"
)

// Thumbs up and down without a correction are KTO's rows: a dislike with
// no better version, useless to DPO, trains KTO; the engine reads the
// written folder as unpaired rows with their labels.
func TestThumbsAloneTrainKTO(t *testing.T) {
	f := newFixture(t, "")
	for i := 0; i < 5; i++ {
		c, _ := f.store.CreateConversation("c", "")
		good := f.chatTurn(c.ID, "Name a bird", "A robin.")
		f.store.SetRating(good.ID, good.Version, 1)
		bad := f.chatTurn(c.ID, "And another?", "I cannot say.")
		f.store.SetRating(bad.ID, bad.Version, -1)
	}
	sum, err := f.svc.Summarize(ui.TeachSource{Feedback: true}, 0)
	if err != nil || sum.Rated != 10 || sum.Pairs != 0 || sum.Unpaired != 5 || sum.Usable(ui.MethodKTO) != 10 || sum.Usable(ui.MethodDPO) != 0 {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	plan := defaultPlan()
	plan.Method, plan.ValShare = ui.MethodKTO, 0.2
	dir, err := exportData(t, f, plan)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := chattemplate.Load(tinyModel)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(tinyModel)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := trainset.LoadFolder(context.Background(), dir, &trainset.Encoder{Template: tmpl, Tok: tok, Method: train.KTO, MaxLen: 512})
	if err != nil {
		t.Fatalf("the engine refused the KTO dataset: %v", err)
	}
	liked, disliked := 0, 0
	for _, s := range []*trainset.Split{ds.Train, ds.Valid} {
		for _, r := range s.Rows {
			if r.Rejected != nil || len(r.Chosen) == 0 {
				t.Fatalf("not an unpaired row: %+v", r)
			}
			if r.Label {
				liked++
			} else {
				disliked++
			}
		}
	}
	if liked != 5 || disliked != 5 || len(ds.Valid.Rows) != 2 {
		t.Fatalf("%d liked, %d disliked, %d validation rows", liked, disliked, len(ds.Valid.Rows))
	}
}
