package chat

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"perch/app/history"
	"perch/engine"
	"perch/ui"
)

func TestSendSavesUserTurnThenStreamsAndSavesAnswer(t *testing.T) {
	eng := &fakeEngine{tokens: append([]engine.Token{{Text: "hmm", Thinking: true}}, toks("Hello", ", ", "world.")...),
		gate: make(chan struct{})}
	f := newFixture(t, eng, e2b)
	r, err := f.svc.Send(context.Background(), "", "  Say hello\nplease ", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The user turn is on disk before any token arrives (the engine holds
	// its first token until the test has looked).
	ms, _ := f.store.Messages(r.ConversationID)
	close(eng.gate)
	if len(ms) != 2 || ms[0].Text != "Say hello\nplease" || ms[1].State != history.Streaming {
		t.Fatalf("stored before streaming: %+v", ms)
	}
	if r.User.ID != ms[0].ID || r.Assistant.ID != ms[1].ID || r.Assistant.Model != "Gemma-4 E2B" {
		t.Fatalf("reply ids %q/%q", r.User.ID, r.Assistant.ID)
	}
	text, last := drain(t, r)
	if text != "Hello, world." || last.State != ui.Done || last.Stats.GeneratedTokens != 4 || last.Stats.TokensPerSec != 42.5 {
		t.Fatalf("stream: %q, %+v %+v", text, last, last.Stats)
	}
	ms, _ = f.store.Messages(r.ConversationID)
	a := ms[1]
	if a.Text != "Hello, world." || a.Thinking != "hmm" || a.State != history.Done || a.Stats.TimeToFirst != 120*time.Millisecond {
		t.Fatalf("saved answer: %+v", a)
	}
	c, _ := f.store.Conversation(r.ConversationID)
	if c.Title != "Say hello" {
		t.Fatalf("title %q", c.Title)
	}
	// The engine got the conversation and the settings.
	req := eng.lastRequest()
	// Untouched settings send no override: the engine applies the model's own.
	if len(req.Messages) != 1 || req.Messages[0].Content[0].Text != "Say hello\nplease" || req.Sampling != (engine.Sampling{}) ||
		req.MaxSoftTokens != 0 || req.MaxTokens != 0 || req.VideoFPS != 0 || req.MaxFrames != 0 {
		t.Fatalf("request: %+v", req)
	}
}

func TestRequestCarriesSystemPromptAttachmentsAndHistory(t *testing.T) {
	eng := &fakeEngine{tokens: toks("ok")}
	f := newFixture(t, eng, e2b)
	f.set.SystemPrompt = "Be brief."
	f.set.Thinking = true
	f.set.Sampling.Temperature = ui.Ptr[float32](0.3)
	png := pngBytes(t, 40, 30)
	att, err := f.svc.AttachFile(writeTemp(t, "dot.png", png))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := f.svc.Send(context.Background(), "", "What is this?", []ui.Attachment{att})
	drain(t, r)
	r2, _ := f.svc.Send(context.Background(), r.ConversationID, "And now?", nil)
	drain(t, r2)
	req := eng.lastRequest()
	roles := []string{}
	for _, m := range req.Messages {
		roles = append(roles, string(m.Role))
	}
	if strings.Join(roles, ",") != "system,user,assistant,user" {
		t.Fatalf("roles %v", roles)
	}
	first := req.Messages[1]
	if first.Content[0].Type != engine.PartImage || string(first.Content[0].Data) != string(png) || first.Content[1].Text != "What is this?" {
		t.Fatalf("first turn parts: %+v", first.Content)
	}
	if !req.EnableThinking || *req.Sampling.Temperature != float32(0.3) {
		t.Fatalf("settings not applied: thinking %v temp %v", req.EnableThinking, *req.Sampling.Temperature)
	}
}

func TestStopKeepsPartialAnswerAsStopped(t *testing.T) {
	eng := &fakeEngine{forever: true, every: time.Millisecond}
	f := newFixture(t, eng, e2b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, _ := f.svc.Send(ctx, "", "Count forever", nil)
	ch := answers(r)
	for a := range ch {
		if strings.Count(a.Text, "x") >= 5 {
			cancel()
			break
		}
	}
	text, last := drainAnswers(t, ch)
	if last.State != ui.Stopped || last.Err != nil {
		t.Fatalf("final %+v", last)
	}
	ms, _ := f.store.Messages(r.ConversationID)
	if ms[1].State != history.Stopped || !strings.HasPrefix(ms[1].Text, "x x x x x") || ms[1].Text != text {
		t.Fatalf("saved %q (%s), streamed %q", ms[1].Text, ms[1].State, text)
	}
}

func TestRegenerateKeepsEarlierVersions(t *testing.T) {
	eng := &fakeEngine{tokens: toks("one")}
	f := newFixture(t, eng, e2b)
	r, _ := f.svc.Send(context.Background(), "", "Q", nil)
	drain(t, r)
	r1, _ := f.svc.Send(context.Background(), r.ConversationID, "Q2", nil)
	drain(t, r1)
	eng.tokens = toks("two")
	r2, err := f.svc.Regenerate(context.Background(), r.ConversationID, r.Assistant.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Assistant.ID != r.Assistant.ID || r2.Assistant.Version != 2 || r2.Assistant.Versions != 2 {
		t.Fatalf("regenerated answer = %+v, want version 2 of 2 of the same answer", r2.Assistant)
	}
	drain(t, r2)
	ms, _ := f.store.Messages(r.ConversationID)
	if len(ms) != 2 || ms[0].Text != "Q" || ms[1].Text != "two" || ms[1].Versions != 2 {
		t.Fatalf("after regenerate (what followed goes, the answer has two versions): %+v", ms)
	}
	if n := len(eng.lastRequest().Messages); n != 1 {
		t.Fatalf("regenerate sent %d messages, want just the question", n)
	}
	// ◀: the first version is back, for the chat and for the model.
	m, err := f.svc.UseVersion(r.ConversationID, r.Assistant.ID, 1)
	if err != nil || m.Text != "one" || m.Version != 1 || m.Versions != 2 {
		t.Fatalf("UseVersion(1) = %+v, %v", m, err)
	}
	r3, _ := f.svc.Send(context.Background(), r.ConversationID, "Q3", nil)
	drain(t, r3)
	if got := eng.lastRequest().Messages[1].Content[0].Text; got != "one" {
		t.Fatalf("the model saw %q for the answer, want the version in use", got)
	}
	if _, err := f.svc.UseVersion(r.ConversationID, r.Assistant.ID, 7); err == nil {
		t.Fatal("a version that does not exist should be refused")
	}
	// Trying again after a failure replaces the failure rather than keeping it.
	eng.err = errors.New("no memory")
	rf, _ := f.svc.Send(context.Background(), r.ConversationID, "Q4", nil)
	drain(t, rf)
	eng.err = nil
	rr, _ := f.svc.Regenerate(context.Background(), r.ConversationID, rf.Assistant.ID)
	drain(t, rr)
	if rr.Assistant.Versions != 1 {
		t.Fatalf("a failed answer was kept as a version: %+v", rr.Assistant)
	}
}

func TestEditReplacesTurnAndWhatFollowed(t *testing.T) {
	eng := &fakeEngine{tokens: toks("A")}
	f := newFixture(t, eng, e2b)
	r, _ := f.svc.Send(context.Background(), "", "2+2?", nil)
	drain(t, r)
	r2, _ := f.svc.Send(context.Background(), r.ConversationID, "and 3+3?", nil)
	drain(t, r2)
	r3, err := f.svc.Edit(context.Background(), r.ConversationID, r.User.ID, "2+3?")
	if err != nil {
		t.Fatal(err)
	}
	drain(t, r3)
	ms, _ := f.store.Messages(r.ConversationID)
	var texts []string
	for _, m := range ms {
		texts = append(texts, m.Role+":"+m.Text)
	}
	if strings.Join(texts, "|") != "user:2+3?|assistant:A" || r3.User.Text != "2+3?" {
		t.Fatalf("after edit: %v", texts)
	}
}

func TestEngineErrorsBecomeInlineMessages(t *testing.T) {
	eng := &fakeEngine{err: engine.ErrBusy}
	f := newFixture(t, eng, e2b)
	r, _ := f.svc.Send(context.Background(), "", "hi", nil)
	_, last := drain(t, r)
	if last.State != ui.Failed || !strings.Contains(last.Err.Error(), "busy answering other questions") {
		t.Fatalf("busy: %+v", last)
	}
	eng.err, eng.tokens, eng.midErr = nil, toks("par", "tial"), errors.New("out of memory in layer 3")
	r, _ = f.svc.Send(context.Background(), r.ConversationID, "again", nil)
	text, last := drain(t, r)
	if text != "partial" || last.State != ui.Failed || !strings.Contains(last.Err.Error(), "choose a smaller model in Models") {
		t.Fatalf("mid-stream error: %q %+v", text, last)
	}
	ms, _ := f.store.Messages(r.ConversationID)
	if m := ms[len(ms)-1]; m.State != history.Failed || m.Text != "partial" || !strings.Contains(m.Error, "layer 3") {
		t.Fatalf("saved failure: %+v", m)
	}
	// A failed empty answer is left out of the next request.
	eng.midErr = nil
	r, _ = f.svc.Send(context.Background(), r.ConversationID, "third", nil)
	drain(t, r)
	for _, m := range eng.lastRequest().Messages {
		if m.Role == engine.RoleAssistant && len(m.Content) == 0 {
			t.Fatal("empty assistant turn sent to the engine")
		}
	}
}

func TestAttachTypesAndRefusals(t *testing.T) {
	f := newFixture(t, &fakeEngine{}, e2b)
	img, err := f.svc.AttachFile(writeTemp(t, "photo.png", pngBytes(t, 200, 100)))
	if err != nil {
		t.Fatal(err)
	}
	if img.Kind != ui.Image || img.Width != 200 || img.Height != 100 || img.Thumb == nil || img.Thumb.Bounds().Dx() != thumbSide {
		t.Fatalf("image: %+v", img)
	}
	snd, err := f.svc.AttachFile(writeTemp(t, "tone.wav", wavBytes(2, 16000)))
	if err != nil {
		t.Fatal(err)
	}
	if snd.Kind != ui.Audio || snd.Duration.Round(10*time.Millisecond) != 2*time.Second {
		t.Fatalf("audio: %+v", snd)
	}
	vid, err := f.svc.AttachFile(writeTemp(t, "clip.mp4", mp4Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if vid.Kind != ui.Video || vid.MIME != "video/mp4" {
		t.Fatalf("video: %+v", vid)
	}
	for name, data := range map[string][]byte{"notes.txt": []byte("just some text"), "empty.png": {}} {
		if _, err := f.svc.AttachFile(writeTemp(t, name, data)); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := f.svc.AttachFile(writeTemp(t, "text.txt", []byte("hello"))); err == nil ||
		!strings.Contains(err.Error(), "not a photo, sound or video Perch can read") {
		t.Fatalf("text file: %v", err)
	}
	if _, err := f.svc.AttachFile(t.TempDir()); err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Fatalf("folder: %v", err)
	}
	if _, err := f.svc.AttachFile("/no/such/file.png"); err == nil || !strings.Contains(err.Error(), "moved or deleted") {
		t.Fatalf("missing: %v", err)
	}
	old := maxBytes[ui.Image]
	maxBytes[ui.Image] = 100
	defer func() { maxBytes[ui.Image] = old }()
	if _, err := f.svc.AttachFile(writeTemp(t, "big.png", pngBytes(t, 50, 50))); err == nil || !strings.Contains(err.Error(), "up to") {
		t.Fatalf("oversized: %v", err)
	}
	// The bytes are stored content-addressed under the attachment's id.
	if data, err := f.store.ReadBlob(snd.ID); err != nil || len(data) != len(wavBytes(2, 16000)) {
		t.Fatalf("stored clip: %d bytes, %v", len(data), err)
	}
}

func TestModelThatCannotHearExplainsAudio(t *testing.T) {
	moe := Located{Dir: "/models/26b", Name: "Gemma-4 26B-A4B", Vision: true, Video: true}
	f := newFixture(t, &fakeEngine{}, moe)
	_, err := f.svc.AttachFile(writeTemp(t, "memo.wav", wavBytes(1, 16000)))
	if err == nil || !strings.Contains(err.Error(), "Gemma-4 26B-A4B can't hear audio") || !strings.Contains(err.Error(), "E2B, E4B or 12B") {
		t.Fatalf("audio on 26B: %v", err)
	}
	// A clip attached under another model is refused at send too.
	_, err = f.svc.Send(context.Background(), "", "listen", []ui.Attachment{{ID: "x", Name: "memo.wav", Kind: ui.Audio}})
	if err == nil || !strings.Contains(err.Error(), "can't hear audio") {
		t.Fatalf("send with audio on 26B: %v", err)
	}
	if cs, _ := f.store.Conversations(""); len(cs) != 0 {
		t.Fatal("a refused send created a conversation")
	}
}

func TestRuntimeLoadsLazilyAndUnloads(t *testing.T) {
	eng := &fakeEngine{tokens: toks("hi")}
	rt, loads := newRuntime(eng, e2b)
	var seen []ui.ModelState
	got := make(chan ui.ModelState, 16)
	rt.Watch(func(s ui.ModelState) { got <- s })
	if err := rt.Select("e2b"); err != nil {
		t.Fatal(err)
	}
	if *loads != 0 || rt.State().Loaded {
		t.Fatal("Select loaded the model")
	}
	var status []string
	gen, err := rt.Acquire(context.Background(), func(s string) { status = append(status, s) })
	if err != nil {
		t.Fatal(err)
	}
	if *loads != 1 || !rt.State().Loaded || len(status) != 1 || status[0] != "Loading Gemma-4 E2B…" {
		t.Fatalf("loads %d, state %+v, status %v", *loads, rt.State(), status)
	}
	rt.Unload() // in use: refused
	if !rt.State().Loaded {
		t.Fatal("unloaded while an answer held the model")
	}
	ch, _ := gen.Generate(context.Background(), engine.Request{})
	for range ch {
	}
	rt.Unload()
	if rt.State().Loaded || !eng.closed {
		t.Fatal("Unload did not free the model")
	}
	for len(seen) < 4 {
		select {
		case s := <-got:
			seen = append(seen, s)
		case <-time.After(5 * time.Second):
			t.Fatalf("watchers saw %d changes: %+v", len(seen), seen)
		}
	}
	// Next use loads again.
	if _, err := rt.Acquire(context.Background(), nil); err != nil || *loads != 2 {
		t.Fatalf("reload: %v, loads %d", err, *loads)
	}
}

func TestRuntimeLoadFailureIsShown(t *testing.T) {
	rt := NewRuntime(func(string) (Located, error) { return e2b, nil },
		func(string) (Engine, engine.ModelInfo, error) {
			return nil, engine.ModelInfo{}, os.ErrNotExist
		}, nil)
	rt.Select("e2b")
	_, err := rt.Acquire(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "could not load Gemma-4 E2B") || !strings.Contains(rt.State().Err, "could not load") {
		t.Fatalf("err %v, state %+v", err, rt.State())
	}
	store, _, _ := history.Open("")
	defer store.Close()
	svc := New(store, rt, MediaProbe{}, ui.DefaultSettings)
	if _, err := svc.Send(context.Background(), "", "hi", nil); err == nil || !strings.Contains(err.Error(), "could not be loaded") {
		t.Fatalf("send with a broken model: %v", err)
	}
}

func TestRuntimeUnloadsWhenIdle(t *testing.T) {
	eng := &fakeEngine{}
	rt, _ := newRuntime(eng, e2b)
	rt.IdleUnload = 20 * time.Millisecond
	used := ""
	rt.onUse = func(id string) { used = id }
	if err := rt.Use("e2b"); err != nil {
		t.Fatal(err)
	}
	if used != "e2b" || !rt.State().Loaded {
		t.Fatalf("Use: used %q state %+v", used, rt.State())
	}
	deadline := time.Now().Add(5 * time.Second)
	for rt.State().Loaded && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if rt.State().Loaded {
		t.Fatal("idle model not unloaded")
	}
}

// panicky is a model whose Generate panics.
type panicky struct{ *fakeEngine }

func (panicky) Generate(context.Context, engine.Request) (<-chan engine.Event, error) { panic("boom") }

func TestPanicBecomesAnInlineError(t *testing.T) {
	store, _, _ := history.Open("")
	defer store.Close()
	rt := NewRuntime(func(string) (Located, error) { return e2b, nil },
		func(string) (Engine, engine.ModelInfo, error) { return panicky{&fakeEngine{}}, engine.ModelInfo{}, nil }, nil)
	rt.Select("e2b")
	svc := New(store, rt, MediaProbe{}, ui.DefaultSettings)
	r, err := svc.Send(context.Background(), "", "hi", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, last := drain(t, r)
	if last.State != ui.Failed || !strings.Contains(last.Err.Error(), "internal error (boom)") {
		t.Fatalf("final = %+v", last)
	}
	ms, _ := store.Messages(r.ConversationID)
	if ms[1].State != history.Failed || ms[0].Text != "hi" {
		t.Fatalf("saved: %+v", ms)
	}
}
