package contextfit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"perch/engine"
)

// fakeMeasure counts 4 tokens per turn, one per word and 100 per
// attachment, plus 3 for <bos> and the generation prompt.
type fakeMeasure struct {
	context  int
	noSizes  bool
	measured int
}

func (f *fakeMeasure) Measure(_ context.Context, req engine.Request) (engine.Measure, error) {
	f.measured++
	m := engine.Measure{Context: f.context, Tokens: 3}
	for _, msg := range req.Messages {
		s := engine.MessageSize{Tokens: 4}
		for _, p := range msg.Content {
			if p.Type == engine.PartText {
				s.Tokens += len(strings.Fields(p.Text))
			} else {
				s.Tokens += 100
				s.Media += 100
			}
		}
		m.Tokens += s.Tokens
		m.Messages = append(m.Messages, s)
	}
	if f.noSizes {
		m.Messages = nil
	}
	return m, nil
}

func words(n int) string { return strings.TrimSpace(strings.Repeat("w ", n)) }

func userTurn(i int, photo bool) engine.Message {
	m := engine.Message{Role: engine.RoleUser}
	if photo {
		m.Content = append(m.Content, engine.Part{Type: engine.PartImage, Name: fmt.Sprintf("p%d.png", i)})
	}
	m.Content = append(m.Content, engine.Part{Type: engine.PartText, Text: fmt.Sprintf("q%d %s", i, words(10))})
	return m
}

// conversation has a system prompt and n turns with a photo each; the
// newest user turn is the last message.
func conversation(n int) engine.Request {
	req := engine.Request{MaxTokens: 200, Messages: []engine.Message{engine.Text(engine.RoleSystem, "be kind")}}
	for i := 0; i < n; i++ {
		req.Messages = append(req.Messages, userTurn(i, true))
		if i < n-1 {
			req.Messages = append(req.Messages, engine.Text(engine.RoleAssistant, fmt.Sprintf("a%d %s", i, words(40))))
		}
	}
	return req
}

func TestFitsUntouchedWhenThereIsRoom(t *testing.T) {
	f := &fakeMeasure{context: 4096}
	req := conversation(3)
	got, cut, meas, err := Fit(context.Background(), f, req, Cut{})
	if err != nil || cut.Trimmed() || len(got.Messages) != len(req.Messages) || f.measured != 1 {
		t.Fatalf("cut %+v, %d messages, %d measures, %v", cut, len(got.Messages), f.measured, err)
	}
	if meas.Tokens > Limit(4096, 200) {
		t.Fatalf("measure %d", meas.Tokens)
	}
}

func TestAttachmentsGoBeforeTextThenWholeOldTurns(t *testing.T) {
	f := &fakeMeasure{context: 2048}
	limit := Limit(2048, 200)
	// 12 turns: ~1.9K tokens, over the limit. Photos leave old turns
	// mediaLead messages ahead of the text: the oldest kept turns are text only.
	got, cut, meas, err := Fit(context.Background(), f, conversation(12), Cut{})
	if err != nil {
		t.Fatal(err)
	}
	if meas.Tokens > limit || cut.MediaFrom < cut.From+mediaLead {
		t.Fatalf("12 turns: cut %+v, %d tokens (limit %d): attachments should go ahead of text", cut, meas.Tokens, limit)
	}
	if got.Messages[0].Role != engine.RoleSystem || !hasMedia(got.Messages[len(got.Messages)-1]) {
		t.Fatal("the system prompt and the newest photo must stay")
	}
	for i, m := range got.Messages[1:] {
		if idx := cut.From + i; hasMedia(m) != (idx >= cut.MediaFrom && idx%2 == 0) {
			t.Fatalf("message %d: media %v with cut %+v", idx, hasMedia(m), cut)
		}
	}
	first := got.Messages[1].Content[0].Text
	if want := fmt.Sprintf("[photo p%d.png: no longer shown]\nq%d ", cut.From/2, cut.From/2); !strings.HasPrefix(first, want) {
		t.Fatalf("left-out photo note = %q, want %q…", first, want)
	}
	// 30 turns: even without photos too long; old turns go, whole and oldest first.
	req := conversation(30)
	got, cut, meas, err = Fit(context.Background(), f, req, Cut{})
	if err != nil {
		t.Fatal(err)
	}
	if meas.Tokens > limit || cut.From == 0 {
		t.Fatalf("30 turns: cut %+v, %d tokens", cut, meas.Tokens)
	}
	kept := got.Messages[1:]
	if kept[0].Role != engine.RoleUser {
		t.Fatal("the kept part must start with a user turn")
	}
	tail := req.Messages[len(req.Messages)-len(kept):]
	for i := range kept {
		want := tail[i].Content[len(tail[i].Content)-1].Text
		if !strings.HasSuffix(kept[i].Content[len(kept[i].Content)-1].Text, want) {
			t.Fatalf("kept message %d is not the newest ones in order", i)
		}
	}
}

// A conversation that grows turn by turn, each answer's cut fed to the
// next, keeps its start for several turns at a time; so does one measured
// afresh each time (the local API, which keeps no state).
func TestCutsMoveInStepsAsTheConversationGrows(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		f := &fakeMeasure{context: 2048}
		var cut Cut
		changes, trimmedTurns := 0, 0
		for n := 1; n <= 60; n++ {
			start := cut
			if stateless {
				start = Cut{}
			}
			_, next, meas, err := Fit(context.Background(), f, conversation(n), start)
			if err != nil {
				t.Fatalf("turn %d: %v", n, err)
			}
			if meas.Tokens > Limit(2048, 200) {
				t.Fatalf("turn %d: %d tokens", n, meas.Tokens)
			}
			if next.From < cut.From || next.MediaFrom < cut.MediaFrom {
				t.Fatalf("turn %d: cut went back from %+v to %+v", n, cut, next)
			}
			if next != cut {
				changes++
			}
			if next.Trimmed() {
				trimmedTurns++
			}
			cut = next
		}
		if trimmedTurns < 40 || changes > trimmedTurns/3 {
			t.Errorf("stateless=%v: the cut changed on %d of %d trimmed turns", stateless, changes, trimmedTurns)
		}
	}
}

func TestWithoutSizesItStillConverges(t *testing.T) {
	f := &fakeMeasure{context: 2048, noSizes: true}
	_, cut, meas, err := Fit(context.Background(), f, conversation(30), Cut{})
	if err != nil || meas.Tokens > Limit(2048, 200) || cut.From == 0 {
		t.Fatalf("cut %+v, %d tokens, %v", cut, meas.Tokens, err)
	}
}

func TestANewestMessageTooLongAloneIsRefused(t *testing.T) {
	f := &fakeMeasure{context: 512}
	req := conversation(3)
	req.Messages = append(req.Messages[:len(req.Messages)-1], engine.Text(engine.RoleUser, words(600)))
	_, _, _, err := Fit(context.Background(), f, req, Cut{})
	var tl *TooLongError
	if !errors.As(err, &tl) || tl.Limit != Limit(512, 200) || !strings.Contains(err.Error(), "shorten it") {
		t.Fatalf("err = %v", err)
	}
}

func TestLimitLeavesRoomToAnswer(t *testing.T) {
	for _, c := range []struct{ n, maxTok, want int }{
		{4096, 0, 3072}, {4096, 4096, 3072}, {4096, 256, 3840}, {32768, 2048, 30720},
	} {
		if got := Limit(c.n, c.maxTok); got != c.want {
			t.Errorf("Limit(%d, %d) = %d, want %d", c.n, c.maxTok, got, c.want)
		}
	}
}
