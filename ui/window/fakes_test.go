package window

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"perch/ui"
	"perch/ui/look"
)

// loop stands in for Fyne's UI goroutine: views post work with do, and the
// test goroutine runs it in until, so widgets are only touched from the test
// goroutine (as they are only touched from Fyne's in the app).
type loop struct{ q chan func() }

func newLoop() *loop { return &loop{q: make(chan func(), 4096)} }

func (l *loop) do(f func()) { l.q <- f }

// until runs posted work until cond holds, failing after 10 s.
func (l *loop) until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !cond() {
		select {
		case f := <-l.q:
			f()
		case <-time.After(5 * time.Millisecond):
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// drain runs whatever is queued now.
func (l *loop) drain() {
	for {
		select {
		case f := <-l.q:
			f()
		default:
			return
		}
	}
}

// Delta is one step of a fake answer: Text and Thinking are appended; the
// last has Done set (and State, Stats or Err).
type Delta struct {
	Text, Thinking, Status string
	Done                   bool
	State                  ui.MessageState
	Stats                  *ui.Stats
	Err                    error
}

// script is what the fake model answers: deltas published one by one.
type script struct {
	deltas  []Delta
	every   time.Duration // pause between deltas
	forever string        // after deltas, repeat this text until cancelled
}

// fakeChat keeps conversations in memory and answers from scripts.
type fakeChat struct {
	mu      sync.Mutex
	convs   []ui.Conversation
	msgs    map[string][]ui.Message
	next    []script // answers, in order; the last one repeats
	nextID  int
	calls   []string
	sawStop chan struct{}
	// versions keeps earlier texts of regenerated answers, by answer id.
	versions map[string][]string
	trimOK   map[string]bool
	view     *ui.ContextView // sent with every answer when set
}

func newFakeChat(answers ...script) *fakeChat {
	if len(answers) == 0 {
		answers = []script{{deltas: words("OK.")}}
	}
	return &fakeChat{msgs: map[string][]ui.Message{}, next: answers, sawStop: make(chan struct{}, 8),
		versions: map[string][]string{}, trimOK: map[string]bool{}}
}

func (f *fakeChat) id(prefix string) string { f.nextID++; return fmt.Sprintf("%s%d", prefix, f.nextID) }

func (f *fakeChat) Conversations(q string) ([]ui.Conversation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []ui.Conversation
	for i := len(f.convs) - 1; i >= 0; i-- {
		c := f.convs[i]
		if strings.Contains(strings.ToLower(c.Title), strings.ToLower(q)) {
			out = append(out, c)
			continue
		}
		for _, m := range f.msgs[c.ID] {
			if q != "" && strings.Contains(strings.ToLower(m.Text), strings.ToLower(q)) {
				c.Snippet = m.Text
				out = append(out, c)
				break
			}
		}
	}
	return out, nil
}

func (f *fakeChat) NewConversation() (ui.Conversation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := ui.Conversation{ID: f.id("c"), Title: "New chat", Updated: time.Now()}
	f.convs = append(f.convs, c)
	return c, nil
}

func (f *fakeChat) Rename(id, title string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.convs {
		if f.convs[i].ID == id {
			f.convs[i].Title = title
			return nil
		}
	}
	return errors.New("no such chat")
}

func (f *fakeChat) Delete(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.convs {
		if f.convs[i].ID == id {
			f.convs = append(f.convs[:i], f.convs[i+1:]...)
			delete(f.msgs, id)
			return nil
		}
	}
	return errors.New("no such chat")
}

func (f *fakeChat) Messages(id string) ([]ui.Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ui.Message(nil), f.msgs[id]...), nil
}

// AttachFile types files by extension (the real service sniffs bytes; this
// fake only has to exercise the views).
func (f *fakeChat) AttachFile(path string) (ui.Attachment, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return ui.Attachment{}, err
	}
	a := ui.Attachment{ID: path, Name: filepath.Base(path), Size: fi.Size()}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		a.Kind, a.Width, a.Height = ui.Image, 640, 480
	case ".wav":
		a.Kind, a.Duration = ui.Audio, 2*time.Second
	case ".mp4":
		a.Kind, a.Duration, a.Width, a.Height = ui.Video, 75*time.Second, 1280, 720
	default:
		return ui.Attachment{}, fmt.Errorf("%s is not a photo, sound or video Perch can read", a.Name)
	}
	return a, nil
}

func (f *fakeChat) AttachData(name string, data []byte) (ui.Attachment, error) {
	if len(data) == 0 {
		return ui.Attachment{}, errors.New("empty")
	}
	return ui.Attachment{ID: fmt.Sprint(len(data)), Name: name, Kind: ui.Audio, Size: int64(len(data)), Duration: time.Second}, nil
}

func (f *fakeChat) answer(ctx context.Context, convID string) ui.Reply {
	f.mu.Lock()
	a := ui.Message{ID: f.id("m"), Role: ui.Assistant, State: ui.Streaming}
	f.msgs[convID] = append(f.msgs[convID], a)
	f.mu.Unlock()
	return f.answerInto(ctx, convID, a)
}

// answerInto streams the next scripted answer into message a.
func (f *fakeChat) answerInto(ctx context.Context, convID string, a ui.Message) ui.Reply {
	f.mu.Lock()
	s := f.next[0]
	if len(f.next) > 1 {
		f.next = f.next[1:]
	}
	view := f.view
	f.mu.Unlock()
	st := ui.NewStream()
	go func() {
		var text, thinking strings.Builder
		send := func(d Delta) bool {
			if ctx.Err() != nil {
				return false
			}
			text.WriteString(d.Text)
			thinking.WriteString(d.Thinking)
			st.Publish(ui.Answer{Text: text.String(), Thinking: thinking.String(), Status: d.Status,
				Done: d.Done, State: d.State, Stats: d.Stats, Err: d.Err, View: view})
			return true
		}
		ok := true
		for _, d := range s.deltas {
			if ok = send(d); !ok {
				break
			}
			if d.Done {
				return
			}
			time.Sleep(s.every)
		}
		for ok && s.forever != "" {
			if ok = send(Delta{Text: s.forever}); ok {
				time.Sleep(s.every)
			}
		}
		state := ui.Done
		if !ok {
			state = ui.Stopped
			f.sawStop <- struct{}{}
		}
		f.mu.Lock()
		ms := f.msgs[convID]
		for i := range ms {
			if ms[i].ID == a.ID {
				ms[i].Text, ms[i].State = text.String(), state
				if view != nil {
					ms[i].View = *view
				}
			}
		}
		f.mu.Unlock()
		st.Publish(ui.Answer{Text: text.String(), Thinking: thinking.String(), Done: true, State: state, View: view,
			Stats: &ui.Stats{GeneratedTokens: 12, TokensPerSec: 31.5, TimeToFirst: 240 * time.Millisecond}})
	}()
	return ui.Reply{ConversationID: convID, Assistant: a, Stream: st}
}

func (f *fakeChat) Send(ctx context.Context, convID, text string, atts []ui.Attachment) (ui.Reply, error) {
	f.mu.Lock()
	f.calls = append(f.calls, "send:"+text)
	if convID == "" {
		convID = f.id("c")
		f.convs = append(f.convs, ui.Conversation{ID: convID, Title: text, Updated: time.Now()})
	}
	u := ui.Message{ID: f.id("m"), Role: ui.User, Text: text, Attachments: atts, State: ui.Done}
	f.msgs[convID] = append(f.msgs[convID], u)
	f.mu.Unlock()
	r := f.answer(ctx, convID)
	r.User = u
	return r, nil
}

func (f *fakeChat) truncate(convID, id string, keep bool) {
	ms := f.msgs[convID]
	for i := range ms {
		if ms[i].ID == id {
			if keep {
				i++
			}
			f.msgs[convID] = ms[:i]
			return
		}
	}
}

func (f *fakeChat) Regenerate(ctx context.Context, convID, answerID string) (ui.Reply, error) {
	f.mu.Lock()
	f.calls = append(f.calls, "regenerate:"+answerID)
	f.truncate(convID, answerID, true)
	ms := f.msgs[convID]
	a := &ms[len(ms)-1]
	if a.State != ui.Failed {
		f.versions[a.ID] = append(f.versions[a.ID], a.Text)
	}
	n := len(f.versions[a.ID]) + 1
	a.Text, a.State, a.Version, a.Versions = "", ui.Streaming, n, n
	cp := *a
	f.mu.Unlock()
	return f.answerInto(ctx, convID, cp), nil
}

func (f *fakeChat) AllowTrim(convID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "allowTrim")
	f.trimOK[convID] = true
	return nil
}

// UseVersion swaps the texts: versions 1…n-1 are kept in order, the one in
// use is the message.
func (f *fakeChat) UseVersion(convID, answerID string, n int) (ui.Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("useVersion:%d", n))
	ms := f.msgs[convID]
	for i := range ms {
		if ms[i].ID != answerID {
			continue
		}
		all := append(append([]string(nil), f.versions[answerID]...), "")
		cur := ms[i].Version
		all = append(all[:cur-1], append([]string{ms[i].Text}, all[cur-1:len(all)-1]...)...)
		if n < 1 || n > len(all) {
			return ui.Message{}, errors.New("no such version")
		}
		ms[i].Text, ms[i].Version = all[n-1], n
		f.versions[answerID] = append(append([]string(nil), all[:n-1]...), all[n:]...)
		return ms[i], nil
	}
	return ui.Message{}, errors.New("no such answer")
}

func (f *fakeChat) Edit(ctx context.Context, convID, userID, text string) (ui.Reply, error) {
	f.mu.Lock()
	f.calls = append(f.calls, "edit:"+text)
	f.truncate(convID, userID, false)
	u := ui.Message{ID: f.id("m"), Role: ui.User, Text: text, State: ui.Done}
	f.msgs[convID] = append(f.msgs[convID], u)
	f.mu.Unlock()
	r := f.answer(ctx, convID)
	r.User = u
	return r, nil
}

// fakeModel is a loaded model whose state tests can change.
type fakeModel struct {
	mu       sync.Mutex
	s        ui.ModelState
	watchers []func(ui.ModelState)
	used     []string
	preloads int
}

func (m *fakeModel) State() ui.ModelState { m.mu.Lock(); defer m.mu.Unlock(); return m.s }
func (m *fakeModel) Watch(fn func(ui.ModelState)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.watchers = append(m.watchers, fn)
}
func (m *fakeModel) set(s ui.ModelState) {
	m.mu.Lock()
	m.s = s
	ws := append([]func(ui.ModelState){}, m.watchers...)
	m.mu.Unlock()
	for _, w := range ws {
		w(s)
	}
}
func (m *fakeModel) Use(id string) error {
	m.mu.Lock()
	m.used = append(m.used, id)
	m.mu.Unlock()
	m.set(ui.ModelState{ID: id, Name: "Gemma-4 E2B", Loaded: true, Vision: true, Audio: true})
	return nil
}
func (m *fakeModel) Preload() { m.mu.Lock(); m.preloads++; m.mu.Unlock() }
func (m *fakeModel) Unload()  { s := m.State(); s.Loaded = false; m.set(s) }

// fakeCatalog serves a fixed list and lets tests push download progress.
type fakeCatalog struct {
	mu       sync.Mutex
	models   []ui.CatalogModel
	watchers []func(ui.CatalogModel)
	started  chan string
}

func newFakeCatalog() *fakeCatalog {
	return &fakeCatalog{started: make(chan string, 8), models: []ui.CatalogModel{
		{ID: "e2b", Name: "Gemma-4 E2B", Blurb: "Small and quick", DiskBytes: 3 << 30, RAMBytes: 4 << 30, Fit: ui.FitsWell, Recommended: true, Vision: true, Audio: true},
		{ID: "31b", Name: "Gemma-4 31B", Blurb: "Most capable", DiskBytes: 18 << 30, RAMBytes: 24 << 30, Fit: ui.TooBig, Vision: true},
	}}
}

func (c *fakeCatalog) Models() ([]ui.CatalogModel, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]ui.CatalogModel(nil), c.models...), nil
}
func (c *fakeCatalog) Download(id string) error { c.started <- id; return nil }
func (c *fakeCatalog) Pause(string)             {}
func (c *fakeCatalog) Cancel(string)            {}
func (c *fakeCatalog) Delete(string) error      { return nil }
func (c *fakeCatalog) AddFolder(p string) (string, error) {
	return "", errors.New(p + " has no config.json: choose the folder that holds the model's files")
}
func (c *fakeCatalog) Watch(fn func(ui.CatalogModel)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watchers = append(c.watchers, fn)
}
func (c *fakeCatalog) update(m ui.CatalogModel) {
	c.mu.Lock()
	for i := range c.models {
		if c.models[i].ID == m.ID {
			c.models[i] = m
		}
	}
	ws := append([]func(ui.CatalogModel){}, c.watchers...)
	c.mu.Unlock()
	for _, w := range ws {
		w(m)
	}
}

// fakeRecorder records nothing; tests feed its levels.
type fakeRecorder struct {
	err  error
	last *fakeRecording
}

type fakeRecording struct {
	levels  chan float64
	stopped bool
}

func (r *fakeRecorder) Start(max time.Duration) (ui.Recording, error) {
	if r.err != nil {
		return nil, r.err
	}
	r.last = &fakeRecording{levels: make(chan float64, 100)}
	return r.last, nil
}
func (r *fakeRecording) Levels() <-chan float64 { return r.levels }
func (r *fakeRecording) Stop() ([]byte, time.Duration, error) {
	if !r.stopped {
		r.stopped = true
		close(r.levels)
	}
	return []byte("RIFF....WAVEfmt fake clip"), 3 * time.Second, nil
}
func (r *fakeRecording) Cancel() {
	if !r.stopped {
		r.stopped = true
		close(r.levels)
	}
}

type harness struct {
	t       *testing.T
	app     fyne.App
	loop    *loop
	chat    *fakeChat
	model   *fakeModel
	catalog *fakeCatalog
	rec     *fakeRecorder
	ui      *UI
}

func newHarness(t *testing.T, answers ...script) *harness {
	return newHarnessWith(t, nil, answers...)
}

// newHarnessWith lets a test add services to the Deps (Teach's fakes).
func newHarnessWith(t *testing.T, more func(*harness, *Deps), answers ...script) *harness {
	a := test.NewTempApp(t)
	a.Settings().SetTheme(look.NewTheme())
	h := &harness{t: t, app: a, loop: newLoop(), chat: newFakeChat(answers...), catalog: newFakeCatalog(), rec: &fakeRecorder{},
		model: &fakeModel{s: ui.ModelState{ID: "e2b", Name: "Gemma-4 E2B", Loaded: true, Vision: true, Audio: true}}}
	d := Deps{Chat: h.chat, Model: h.model, Catalog: h.catalog, Recorder: h.rec, Settings: ui.PrefsSettings{P: a.Preferences()}}
	if more != nil {
		more(h, &d)
	}
	h.ui = build(a, d, h.loop.do, func(f func()) { go f() })
	h.ui.Main.Window.Resize(fyne.NewSize(900, 640))
	h.ui.Main.Window.Show()
	t.Cleanup(func() {
		// Let streams wind down so no goroutine posts into a finished test.
		time.Sleep(20 * time.Millisecond)
		h.loop.drain()
	})
	return h
}

func words(s ...string) []Delta {
	var d []Delta
	for _, w := range s {
		d = append(d, Delta{Text: w})
	}
	return d
}
