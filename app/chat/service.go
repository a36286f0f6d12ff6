// Package chat is the conversation service behind Perch's windows: it keeps
// history, checks and stores attachments, builds engine requests from a
// conversation and the settings, and streams answers back while saving
// them. It implements ui.Chat; Runtime implements ui.Model.
package chat

import (
	"bytes"
	"context"
	"errors"
	"image"
	_ "image/png" // stored thumbnails
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"perch/app/contextfit"
	"perch/app/history"
	"perch/app/problem"
	"perch/engine"
	"perch/media/lru"
	"perch/ui"
)

// Models is what the service needs from the model runtime.
type Models interface {
	State() ui.ModelState
	// Acquire returns the loaded model's generator, loading it first if
	// needed; status reports progress ("Loading Gemma-4 E2B…").
	Acquire(ctx context.Context, status func(string)) (Lent, error)
}

// Service implements ui.Chat over a history store and a model runtime.
type Service struct {
	store    *history.Store
	models   Models
	probe    Probe
	settings func() ui.Settings
	// SaveEvery is how often a streaming answer is written to disk.
	SaveEvery time.Duration
	// Choice is the app's adapter choice (nil: no adapters).
	Choice AdapterChoice
	// Seed, when set, seeds every answer's sampling (scripted runs such as
	// make screenshot are reproducible).
	Seed *uint64
	// MCP is the user's tool servers (nil: answers call no tools).
	MCP ToolSource
	// ToolChoice is the first round's tool choice when tools are offered
	// (zero: the model decides; scripted runs such as make screenshot
	// require a call, and then only tools whose schemas the grammar
	// enforces are offered).
	ToolChoice engine.ToolChoice

	tools       toolChoice         // the next new conversation's servers
	attachments *lru.Cache[[]byte] // recent attachments' bytes by hash
	blobReads   atomic.Int64       // attachments read from the store (walk tests count them)
}

// New returns a service. settings is read at each send.
func New(store *history.Store, models Models, probe Probe, settings func() ui.Settings) *Service {
	return &Service{store: store, models: models, probe: probe, settings: settings, SaveEvery: 500 * time.Millisecond,
		attachments: lru.New[[]byte](attachmentCacheBytes, nil)}
}

var _ ui.Chat = (*Service)(nil)

// Conversations lists conversations whose title or messages match query.
func (s *Service) Conversations(query string) ([]ui.Conversation, error) {
	cs, err := s.store.Conversations(query)
	if err != nil {
		return nil, err
	}
	out := make([]ui.Conversation, len(cs))
	for i, c := range cs {
		out[i] = ui.Conversation{ID: c.ID, Title: c.Title, Updated: c.Updated, Snippet: c.Snippet}
	}
	return out, nil
}

// NewConversation starts an empty conversation.
func (s *Service) NewConversation() (ui.Conversation, error) {
	c, err := s.store.CreateConversation("New chat", s.models.State().ID)
	return ui.Conversation{ID: c.ID, Title: c.Title, Updated: c.Updated}, err
}

// Rename sets a conversation's title.
func (s *Service) Rename(id, title string) error { return s.store.Rename(id, title) }

// Delete removes a conversation.
func (s *Service) Delete(id string) error { return s.store.DeleteConversation(id) }

// Messages returns a conversation's messages.
func (s *Service) Messages(id string) ([]ui.Message, error) {
	ms, err := s.store.Messages(id)
	if err != nil {
		return nil, err
	}
	out := make([]ui.Message, len(ms))
	for i, m := range ms {
		out[i] = toUI(m)
		out[i].View = viewToUI(m.View, ms)
	}
	return out, s.addRatings(id, ms, out)
}

func toUI(m history.Message) ui.Message {
	u := ui.Message{ID: m.ID, Role: ui.Role(m.Role), Text: m.Text, Thinking: m.Thinking,
		State: ui.MessageState(m.State), Model: m.Model, Edited: m.Origin == history.OriginEdited,
		Version: m.Version, Versions: m.Versions, Tools: toolsToUI(m.Tools),
		ContextFull: m.State == history.Failed && isContextFull(m.Error)}
	u.Err, u.ErrDetails = history.SplitError(m.Error)
	if m.Stats.GeneratedTokens > 0 {
		u.Stats = &ui.Stats{PromptTokens: m.Stats.PromptTokens, GeneratedTokens: m.Stats.GeneratedTokens,
			TokensPerSec: m.Stats.TokensPerSec, TimeToFirst: m.Stats.TimeToFirst}
	}
	for _, a := range m.Attachments {
		u.Attachments = append(u.Attachments, attachmentToUI(a))
	}
	return u
}

func attachmentToUI(a history.Attachment) ui.Attachment {
	u := ui.Attachment{ID: a.SHA256, Name: a.Name, Kind: ui.MediaKind(a.Kind), MIME: a.MIME, Size: a.Size,
		Duration: a.Duration, Width: a.Width, Height: a.Height}
	if len(a.Thumb) > 0 {
		if img, _, err := image.Decode(bytes.NewReader(a.Thumb)); err == nil {
			u.Thumb = img
		}
	}
	return u
}

// titleFor names a new conversation after its first message.
func titleFor(text string, atts []ui.Attachment) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.Join(strings.Fields(line), " ")
	if line == "" && len(atts) > 0 {
		kind := map[ui.MediaKind]string{ui.Image: "Photo", ui.Audio: "Sound", ui.Video: "Video"}[atts[0].Kind]
		line = kind + ": " + atts[0].Name
	}
	if line == "" {
		return "New chat"
	}
	if utf8.RuneCountInString(line) > 60 {
		r := []rune(line)
		line = strings.TrimSpace(string(r[:59])) + "…"
	}
	return line
}

// friendly puts a failed answer in words, saying what to do; the raw error
// stays as its details.
func friendly(err error) (summary, details string) {
	var ce *engine.ContextError
	var tl *contextfit.TooLongError
	details = err.Error()
	switch {
	case errors.As(err, &ce):
		return contextFull(ce), details
	case errors.As(err, &tl):
		return "This message is too long for the model: " + strings.TrimPrefix(tl.Error(), "your message alone ") + ".", details
	case errors.Is(err, engine.ErrBusy):
		return "Perch is busy answering other questions. Try again when they finish.", details
	case errors.Is(err, engine.ErrClosed):
		return "The model was unloaded while answering. Send again to load it.", details
	case strings.Contains(strings.ToLower(details), "memory"):
		return "The model ran out of memory. Close other apps, shorten the conversation, or choose a smaller model in Models.", details
	}
	switch problem.KindOf(err) {
	case problem.DiskFull, problem.Permission, problem.Fit:
		p := problem.Explain(err, "try again")
		return p.Summary, details
	}
	return "The model could not answer. Try again, or choose another model in Models.", details
}
