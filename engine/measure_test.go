package engine

import (
	"context"
	"errors"
	"perch/engine/gemma4/processor"
	"testing"
)

// Measure counts exactly what Generate prefills, message by message, and
// Generate's refusal of a full context is typed.
func TestMeasureMatchesThePromptTurnByTurn(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{MaxContext: 512})
	img := media(t, "vision-tiny", "image.png")
	req := Request{Messages: []Message{
		Text(RoleSystem, "Be brief."),
		{Role: RoleUser, Content: []Part{{Type: PartImage, Data: img}, {Type: PartText, Text: "What is this?"}}},
		Text(RoleAssistant, "A picture."),
		Text(RoleUser, "And now?"),
	}, MaxTokens: 1, Sampling: Sampling{Temperature: f32(0)}}
	m, err := e.Measure(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if m.Context != 512 || len(m.Messages) != 4 {
		t.Fatalf("measure = %+v", m)
	}
	sum := 0
	for i, ms := range m.Messages {
		sum += ms.Tokens
		if (i == 1) != (ms.Media > 0) || ms.Media >= ms.Tokens {
			t.Errorf("message %d: %+v (only the photo's turn holds media)", i, ms)
		}
	}
	if sum >= m.Tokens || m.Tokens-sum > 32 {
		t.Errorf("turns sum to %d of %d prompt tokens (the rest is <bos> and the generation prompt)", sum, m.Tokens)
	}
	ch, err := e.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	_, done := collect(t, ch)
	if done.Kind != EventDone || done.Stats.PromptTokens != m.Tokens {
		t.Fatalf("Generate prefilled %+v, Measure said %d", done.Stats, m.Tokens)
	}
	// Without the photo the turn shrinks by exactly its media tokens.
	req.Messages[1].Content = req.Messages[1].Content[1:]
	m2, err := e.Measure(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if m.Tokens-m2.Tokens != m.Messages[1].Media {
		t.Errorf("dropping the photo saved %d tokens, Measure said its media were %d", m.Tokens-m2.Tokens, m.Messages[1].Media)
	}
	// A prompt the context cannot hold is refused with its size.
	long := Request{Messages: []Message{Text(RoleUser, repeat("word ", 600))}}
	_, err = e.Generate(context.Background(), long)
	var ce *ContextError
	if !errors.As(err, &ce) || ce.Context != 512 || ce.Prompt < 512 {
		t.Fatalf("oversized prompt: %v", err)
	}
}

func repeat(s string, n int) string {
	out := make([]byte, 0, len(s)*n)
	for i := 0; i < n; i++ {
		out = append(out, s...)
	}
	return string(out)
}

// dropFirst is a context policy that leaves the first message out once,
// then lets the request go; it keeps the measures it was given.
type dropFirst struct{ seen []Measure }

func (d *dropFirst) Fit(msgs []Message, m Measure) ([]Message, bool, error) {
	d.seen = append(d.seen, m)
	if len(d.seen) == 1 {
		return msgs[1:], false, nil
	}
	return nil, true, nil
}

type refuseAll struct{}

func (refuseAll) Fit([]Message, Measure) ([]Message, bool, error) {
	return nil, false, errors.New("nothing fits")
}

// TestContextPolicyInsidePrepare: a request's context policy is applied
// inside Generate's one Prepare: a prompt the policy keeps is prepared
// once, each cut once more, the measures given are Measure's, and the
// policy's refusal is Generate's error.
func TestContextPolicyInsidePrepare(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{Backend: BackendGo})
	msgs := []Message{Text(RoleUser, "Hello there."), Text(RoleAssistant, "Hi."), Text(RoleUser, "How are you?")}
	want, err := e.Measure(t.Context(), Request{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	p := &dropFirst{}
	before := processor.Prepares()
	ids, _ := run(t, e, Request{Messages: msgs, MaxTokens: 2, Sampling: Sampling{Temperature: f32(0)}, Fit: p})
	if n := processor.Prepares() - before; n != 2 || len(p.seen) != 2 || len(ids) != 2 {
		t.Fatalf("%d prepares, %d measures, %d tokens; want 2, 2, 2", n, len(p.seen), len(ids))
	}
	if p.seen[0].Tokens != want.Tokens || len(p.seen[0].Messages) != 3 || len(p.seen[1].Messages) != 2 || p.seen[1].Tokens >= want.Tokens {
		t.Fatalf("measures %+v, want the first %+v", p.seen, want)
	}
	if _, err := e.Generate(t.Context(), Request{Messages: msgs, Fit: refuseAll{}}); err == nil || err.Error() != "nothing fits" {
		t.Fatalf("a refusing policy: %v", err)
	}
}
