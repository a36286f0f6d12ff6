package fake

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

	"perch/ui"
)

// Loop stands in for Fyne's UI goroutine: views post work with do, and the
// test goroutine runs it in until, so widgets are only touched from the test
// goroutine (as they are only touched from Fyne's in the app).
type Loop struct{ q chan func() }

func NewLoop() *Loop { return &Loop{q: make(chan func(), 4096)} }

func (l *Loop) Do(f func()) { l.q <- f }

// Until runs posted work until cond holds, failing after 10 s.
func (l *Loop) Until(t *testing.T, what string, cond func() bool) {
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

// Drain runs whatever is queued now.
func (l *Loop) Drain() {
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

// Script is what the fake model answers: deltas published one by one.
type Script struct {
	Deltas  []Delta
	Every   time.Duration // pause between deltas
	Forever string        // after deltas, repeat this text until cancelled
}

// Chat keeps conversations in memory and answers from scripts.
type Chat struct {
	Mu      sync.Mutex
	Convs   []ui.Conversation
	Msgs    map[string][]ui.Message
	next    []Script // answers, in order; the last one repeats
	nextID  int
	Calls   []string
	SawStop chan struct{}
	// versions keeps earlier texts of regenerated answers, by answer id.
	versions map[string][]string
	TrimOK   map[string]bool
	View     *ui.ContextView // sent with every answer when set
}

func NewChat(answers ...Script) *Chat {
	if len(answers) == 0 {
		answers = []Script{{Deltas: Words("OK.")}}
	}
	return &Chat{Msgs: map[string][]ui.Message{}, next: answers, SawStop: make(chan struct{}, 8),
		versions: map[string][]string{}, TrimOK: map[string]bool{}}
}

func (f *Chat) id(prefix string) string { f.nextID++; return fmt.Sprintf("%s%d", prefix, f.nextID) }

func (f *Chat) Conversations(q string) ([]ui.Conversation, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	var out []ui.Conversation
	for i := len(f.Convs) - 1; i >= 0; i-- {
		c := f.Convs[i]
		if strings.Contains(strings.ToLower(c.Title), strings.ToLower(q)) {
			out = append(out, c)
			continue
		}
		for _, m := range f.Msgs[c.ID] {
			if q != "" && strings.Contains(strings.ToLower(m.Text), strings.ToLower(q)) {
				c.Snippet = m.Text
				out = append(out, c)
				break
			}
		}
	}
	return out, nil
}

func (f *Chat) NewConversation() (ui.Conversation, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	c := ui.Conversation{ID: f.id("c"), Title: "New chat", Updated: time.Now()}
	f.Convs = append(f.Convs, c)
	return c, nil
}

func (f *Chat) Rename(id, title string) error {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	for i := range f.Convs {
		if f.Convs[i].ID == id {
			f.Convs[i].Title = title
			return nil
		}
	}
	return errors.New("no such chat")
}

func (f *Chat) Delete(id string) error {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	for i := range f.Convs {
		if f.Convs[i].ID == id {
			f.Convs = append(f.Convs[:i], f.Convs[i+1:]...)
			delete(f.Msgs, id)
			return nil
		}
	}
	return errors.New("no such chat")
}

func (f *Chat) Messages(id string) ([]ui.Message, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return append([]ui.Message(nil), f.Msgs[id]...), nil
}

// AttachFile types files by extension (the real service sniffs bytes; this
// fake only has to exercise the views).
func (f *Chat) AttachFile(path string) (ui.Attachment, error) {
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

func (f *Chat) AttachData(name string, data []byte) (ui.Attachment, error) {
	if len(data) == 0 {
		return ui.Attachment{}, errors.New("empty")
	}
	return ui.Attachment{ID: fmt.Sprint(len(data)), Name: name, Kind: ui.Audio, Size: int64(len(data)), Duration: time.Second}, nil
}

func (f *Chat) answer(ctx context.Context, convID string) ui.Reply {
	f.Mu.Lock()
	a := ui.Message{ID: f.id("m"), Role: ui.Assistant, State: ui.Streaming}
	f.Msgs[convID] = append(f.Msgs[convID], a)
	f.Mu.Unlock()
	return f.answerInto(ctx, convID, a)
}

// answerInto streams the next scripted answer into message a.
func (f *Chat) answerInto(ctx context.Context, convID string, a ui.Message) ui.Reply {
	f.Mu.Lock()
	s := f.next[0]
	if len(f.next) > 1 {
		f.next = f.next[1:]
	}
	view := f.View
	f.Mu.Unlock()
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
		for _, d := range s.Deltas {
			if ok = send(d); !ok {
				break
			}
			if d.Done {
				return
			}
			time.Sleep(s.Every)
		}
		for ok && s.Forever != "" {
			if ok = send(Delta{Text: s.Forever}); ok {
				time.Sleep(s.Every)
			}
		}
		state := ui.Done
		if !ok {
			state = ui.Stopped
			f.SawStop <- struct{}{}
		}
		f.Mu.Lock()
		ms := f.Msgs[convID]
		for i := range ms {
			if ms[i].ID == a.ID {
				ms[i].Text, ms[i].State = text.String(), state
				if view != nil {
					ms[i].View = *view
				}
			}
		}
		f.Mu.Unlock()
		st.Publish(ui.Answer{Text: text.String(), Thinking: thinking.String(), Done: true, State: state, View: view,
			Stats: &ui.Stats{GeneratedTokens: 12, TokensPerSec: 31.5, TimeToFirst: 240 * time.Millisecond}})
	}()
	return ui.Reply{ConversationID: convID, Assistant: a, Stream: st}
}

func (f *Chat) Send(ctx context.Context, convID, text string, atts []ui.Attachment) (ui.Reply, error) {
	f.Mu.Lock()
	f.Calls = append(f.Calls, "send:"+text)
	if convID == "" {
		convID = f.id("c")
		f.Convs = append(f.Convs, ui.Conversation{ID: convID, Title: text, Updated: time.Now()})
	}
	u := ui.Message{ID: f.id("m"), Role: ui.User, Text: text, Attachments: atts, State: ui.Done}
	f.Msgs[convID] = append(f.Msgs[convID], u)
	f.Mu.Unlock()
	r := f.answer(ctx, convID)
	r.User = u
	return r, nil
}

func (f *Chat) truncate(convID, id string, keep bool) {
	ms := f.Msgs[convID]
	for i := range ms {
		if ms[i].ID == id {
			if keep {
				i++
			}
			f.Msgs[convID] = ms[:i]
			return
		}
	}
}

func (f *Chat) Regenerate(ctx context.Context, convID, answerID string) (ui.Reply, error) {
	f.Mu.Lock()
	f.Calls = append(f.Calls, "regenerate:"+answerID)
	f.truncate(convID, answerID, true)
	ms := f.Msgs[convID]
	a := &ms[len(ms)-1]
	if a.State != ui.Failed {
		f.versions[a.ID] = append(f.versions[a.ID], a.Text)
	}
	n := len(f.versions[a.ID]) + 1
	a.Text, a.State, a.Version, a.Versions = "", ui.Streaming, n, n
	cp := *a
	f.Mu.Unlock()
	return f.answerInto(ctx, convID, cp), nil
}

func (f *Chat) AllowTrim(convID string) error {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.Calls = append(f.Calls, "allowTrim")
	f.TrimOK[convID] = true
	return nil
}

// UseVersion swaps the texts: versions 1…n-1 are kept in order, the one in
// use is the message.
func (f *Chat) UseVersion(convID, answerID string, n int) (ui.Message, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.Calls = append(f.Calls, fmt.Sprintf("useVersion:%d", n))
	ms := f.Msgs[convID]
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

func (f *Chat) Edit(ctx context.Context, convID, userID, text string) (ui.Reply, error) {
	f.Mu.Lock()
	f.Calls = append(f.Calls, "edit:"+text)
	f.truncate(convID, userID, false)
	u := ui.Message{ID: f.id("m"), Role: ui.User, Text: text, State: ui.Done}
	f.Msgs[convID] = append(f.Msgs[convID], u)
	f.Mu.Unlock()
	r := f.answer(ctx, convID)
	r.User = u
	return r, nil
}

// Model is a loaded model whose state tests can change.
type Model struct {
	mu       sync.Mutex
	S        ui.ModelState
	watchers []func(ui.ModelState)
	Used     []string
	preloads int
}

func (m *Model) State() ui.ModelState { m.mu.Lock(); defer m.mu.Unlock(); return m.S }
func (m *Model) Watch(fn func(ui.ModelState)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.watchers = append(m.watchers, fn)
}
func (m *Model) Set(s ui.ModelState) {
	m.mu.Lock()
	m.S = s
	ws := append([]func(ui.ModelState){}, m.watchers...)
	m.mu.Unlock()
	for _, w := range ws {
		w(s)
	}
}
func (m *Model) Use(id string) error {
	m.mu.Lock()
	m.Used = append(m.Used, id)
	m.mu.Unlock()
	m.Set(ui.ModelState{ID: id, Name: "Gemma-4 E2B", Loaded: true, Vision: true, Audio: true})
	return nil
}
func (m *Model) Preload() { m.mu.Lock(); m.preloads++; m.mu.Unlock() }
func (m *Model) Unload()  { s := m.State(); s.Loaded = false; m.Set(s) }

// Catalog serves a fixed list and lets tests push download progress.
type Catalog struct {
	mu       sync.Mutex
	List     []ui.CatalogModel
	watchers []func(ui.CatalogModel)
	Started  chan string
}

func NewCatalog() *Catalog {
	return &Catalog{Started: make(chan string, 8), List: []ui.CatalogModel{
		{ID: "e2b", Name: "Gemma-4 E2B", Blurb: "Small and quick", DiskBytes: 3 << 30, RAMBytes: 4 << 30, Fit: ui.FitsWell, Recommended: true, Vision: true, Audio: true},
		{ID: "31b", Name: "Gemma-4 31B", Blurb: "Most capable", DiskBytes: 18 << 30, RAMBytes: 24 << 30, Fit: ui.TooBig, Vision: true},
	}}
}

func (c *Catalog) Models() ([]ui.CatalogModel, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]ui.CatalogModel(nil), c.List...), nil
}
func (c *Catalog) Download(id string) error { c.Started <- id; return nil }
func (c *Catalog) Pause(string)             {}
func (c *Catalog) Cancel(string)            {}
func (c *Catalog) Delete(string) error      { return nil }
func (c *Catalog) AddFolder(p string) (string, error) {
	return "", errors.New(p + " has no config.json: choose the folder that holds the model's files")
}
func (c *Catalog) Watch(fn func(ui.CatalogModel)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watchers = append(c.watchers, fn)
}
func (c *Catalog) Update(m ui.CatalogModel) {
	c.mu.Lock()
	for i := range c.List {
		if c.List[i].ID == m.ID {
			c.List[i] = m
		}
	}
	ws := append([]func(ui.CatalogModel){}, c.watchers...)
	c.mu.Unlock()
	for _, w := range ws {
		w(m)
	}
}

// Recorder records nothing; tests feed its levels.
type Recorder struct {
	Err  error
	Last *Recording
}

type Recording struct {
	Feed    chan float64
	stopped bool
}

func (r *Recorder) Start(max time.Duration) (ui.Recording, error) {
	if r.Err != nil {
		return nil, r.Err
	}
	r.Last = &Recording{Feed: make(chan float64, 100)}
	return r.Last, nil
}
func (r *Recording) Levels() <-chan float64 { return r.Feed }
func (r *Recording) Stop() ([]byte, time.Duration, error) {
	if !r.stopped {
		r.stopped = true
		close(r.Feed)
	}
	return []byte("RIFF....WAVEfmt fake clip"), 3 * time.Second, nil
}
func (r *Recording) Cancel() {
	if !r.stopped {
		r.stopped = true
		close(r.Feed)
	}
}

func Words(s ...string) []Delta {
	var d []Delta
	for _, w := range s {
		d = append(d, Delta{Text: w})
	}
	return d
}
