package chat

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"perch/app/history"
	"perch/engine"
	"perch/ui"
)

// recordingEngine is the real engine with each request and each answer's
// statistics kept for the test.
type recordingEngine struct {
	*engine.Engine
	mu    sync.Mutex
	reqs  []engine.Request
	stats []*engine.Stats
}

func (r *recordingEngine) Generate(ctx context.Context, req engine.Request) (<-chan engine.Event, error) {
	events, err := r.Engine.Generate(ctx, req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	out := make(chan engine.Event, 64)
	go func() {
		defer close(out)
		for ev := range events {
			if ev.Kind == engine.EventDone {
				r.mu.Lock()
				r.stats = append(r.stats, ev.Stats)
				r.mu.Unlock()
			}
			out <- ev
		}
	}()
	return out, nil
}

// A 40-turn conversation with a photo in every turn, on the tiny model
// (4K context): every turn is answered; once the conversation outgrows the
// context the chat says so, the model sees the system prompt and the newest
// turns (older photos first left out, then older turns), and consecutive
// turns reuse the engine's prefix cache.
func TestFortyTurnsWithPhotosNeverHitTheWall(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model for 40 turns")
	}
	dir, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "models", "text-tiny"))
	e, err := engine.Open(dir, engine.Options{Backend: engine.BackendGo})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.Info().ContextLength != 4096 {
		t.Fatalf("tiny model context %d, want 4096", e.Info().ContextLength)
	}
	rec := &recordingEngine{Engine: e}
	store, _, err := history.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rt := NewRuntime(func(string) (Located, error) { return Located{Dir: dir, Name: "tiny", Vision: true}, nil },
		func(string) (Engine, engine.ModelInfo, error) { return rec, e.Info(), nil }, nil)
	rt.Select("tiny")
	set := ui.DefaultSettings()
	set.SystemPrompt, set.MaxTokens, set.Sampling.Temperature, set.ImageTokens = "You are terse.", ui.Ptr(96), ui.Ptr[float32](0), ui.Ptr(280)
	svc := New(store, rt, MediaProbe{}, func() ui.Settings { return set })

	const turns = 40
	conv := ""
	var questions []string
	trimmedFrom := 0
	prevCut := history.View{}
	var reuse []string
	retrims, reusedTurns := 0, 0
	for turn := 1; turn <= turns; turn++ {
		photo, err := svc.AttachData(fmt.Sprintf("photo%d.png", turn), pngBytes(t, 720+turn, 720))
		if err != nil {
			t.Fatal(err)
		}
		q := fmt.Sprintf("Turn %d: what do you see in this photo?", turn)
		questions = append(questions, q)
		r, err := svc.Send(context.Background(), conv, q, []ui.Attachment{photo})
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		conv = r.ConversationID
		var marker *ui.ContextView
		var last ui.Answer
		deadline := time.After(2 * time.Minute)
		ch := answers(r)
	read:
		for {
			select {
			case a, ok := <-ch:
				if !ok {
					break read
				}
				if a.View != nil {
					marker = a.View
				}
				last = a
			case <-deadline:
				t.Fatalf("turn %d: no answer within 2 minutes", turn)
			}
		}
		ms, _ := store.Messages(conv)
		ans := ms[len(ms)-1]
		if last.State != ui.Done || ans.State != history.Done || strings.TrimSpace(ans.Text) == "" {
			t.Fatalf("turn %d not answered: state %s, error %q", turn, ans.State, ans.Error)
		}
		req := rec.reqs[len(rec.reqs)-1]
		st := rec.stats[len(rec.stats)-1]
		if st.PromptTokens > 4096-96 {
			t.Fatalf("turn %d: prompt %d tokens leaves no room to answer", turn, st.PromptTokens)
		}
		kept := checkNewestKept(t, turn, req, questions, set.SystemPrompt)
		if ans.View.Trimmed() {
			if trimmedFrom == 0 {
				trimmedFrom = turn
			}
			if marker == nil || !marker.Trimmed() {
				t.Fatalf("turn %d: part of the chat was left out but no marker came", turn)
			}
			if ui := toUIView(t, svc, conv); !ui.Trimmed() {
				t.Fatalf("turn %d: the stored chat shows no marker", turn)
			}
		} else if trimmedFrom != 0 {
			t.Fatalf("turn %d: trimming stopped after it began at turn %d", turn, trimmedFrom)
		}
		if trimmedFrom != 0 && turn > trimmedFrom {
			prev := rec.stats[len(rec.stats)-2]
			if ans.View == prevCut {
				// Same start as the turn before: all of its prompt is reused
				// but the few tokens the template writes differently after it.
				if st.PrefixReused < prev.PromptTokens-16 {
					t.Errorf("turn %d: reused %d prompt tokens of the previous %d", turn, st.PrefixReused, prev.PromptTokens)
				}
				reusedTurns++
			} else {
				retrims++
			}
			reuse = append(reuse, fmt.Sprintf("%d:k%d:%d/%d", turn, kept, st.PrefixReused, st.PromptTokens))
		}
		prevCut = ans.View
	}
	if trimmedFrom == 0 {
		t.Fatal("40 turns with photos never outgrew a 4K context")
	}
	if retrims > (turns-trimmedFrom)/2 {
		t.Errorf("the start moved on %d of %d turns after trimming began", retrims, turns-trimmedFrom)
	}
	t.Logf("40 turns answered; trimming began at turn %d; the start moved %d times, %d turns reused the whole previous prompt", trimmedFrom, retrims, reusedTurns)
	t.Logf("after trimming began (turn:k<turns kept>:<prompt tokens reused>/<prompt tokens>): %s", strings.Join(reuse, " "))
}

// checkNewestKept checks that the request is the system prompt and then
// the newest questions, in order, through the one just asked, and that
// photos are kept from some turn on and gone before it; it returns how many
// turns the model saw.
func checkNewestKept(t *testing.T, turn int, req engine.Request, questions []string, system string) int {
	t.Helper()
	if req.Messages[0].Role != engine.RoleSystem || req.Messages[0].Content[0].Text != system {
		t.Fatalf("turn %d: the system prompt is not first", turn)
	}
	var asked []string
	photos := false
	for _, m := range req.Messages[1:] {
		if m.Role != engine.RoleUser {
			continue
		}
		text := m.Content[len(m.Content)-1].Text
		asked = append(asked, text[strings.LastIndex(text, "Turn "):])
		switch {
		case hasPhoto(m):
			photos = true
		case photos:
			t.Fatalf("turn %d: a photo was left out of a newer turn than one kept", turn)
		}
	}
	want := questions[len(questions)-len(asked):]
	if strings.Join(asked, "|") != strings.Join(want, "|") {
		t.Fatalf("turn %d: the model saw questions %q, want the newest %d", turn, asked, len(want))
	}
	if !photos {
		t.Fatalf("turn %d: the newest photo was left out", turn)
	}
	return len(asked)
}

func hasPhoto(m engine.Message) bool {
	for _, p := range m.Content {
		if p.Type == engine.PartImage {
			return true
		}
	}
	return false
}

// toUIView is the context view the chat shows for the newest answer.
func toUIView(t *testing.T, svc *Service, conv string) ui.ContextView {
	ms, err := svc.Messages(conv)
	if err != nil {
		t.Fatal(err)
	}
	return ms[len(ms)-1].View
}
