// Package ui holds Perch's Fyne views: the chat window, message list,
// composer (drop, attach, paste, mic), quick-ask popup, menubar menu, models
// view, settings and theme. It talks to the rest of the app only through the
// small interfaces in this file, and updates widgets from other goroutines
// only through fyne.Do.
package ui

import (
	"context"
	"image"
	"time"
)

// MediaKind is the path an attachment takes.
type MediaKind string

const (
	Image MediaKind = "image"
	Audio MediaKind = "audio"
	Video MediaKind = "video"
)

// Attachment is a media file ready to send.
type Attachment struct {
	ID       string // content address (sha256)
	Name     string
	Kind     MediaKind
	MIME     string
	Size     int64
	Duration time.Duration // audio and video
	Width    int           // image and video
	Height   int
	Thumb    image.Image // nil: an icon is shown
}

// Role of a message.
type Role string

const (
	User      Role = "user"
	Assistant Role = "assistant"
)

// MessageState says where an answer stands.
type MessageState string

const (
	Done        MessageState = "done"
	Streaming   MessageState = "streaming"
	Stopped     MessageState = "stopped"
	Interrupted MessageState = "interrupted"
	Failed      MessageState = "failed"
)

// Stats are shown discreetly under an answer.
type Stats struct {
	PromptTokens    int
	GeneratedTokens int
	TokensPerSec    float64
	TimeToFirst     time.Duration
}

// Message is one turn of a conversation.
type Message struct {
	ID          string
	Role        Role
	Text        string
	Thinking    string
	Attachments []Attachment
	State       MessageState
	Err         string // for Failed: what went wrong and what to do
	Stats       *Stats
	Model       string
}

// Conversation is one entry of the conversation list.
type Conversation struct {
	ID      string
	Title   string
	Updated time.Time
	Snippet string // a search hit in the messages' text ("" when the title matched)
}

// Reply is a started answer: its conversation, the stored user turn (Send,
// Edit), the answer's placeholder, and its stream, whose last answer has
// Done set.
type Reply struct {
	ConversationID string
	User           Message
	Assistant      Message
	Stream         *Stream
}

// ModelState is the loaded model as the UI shows it.
type ModelState struct {
	ID      string // catalog id, or a folder path
	Name    string // "Gemma-4 E2B"
	Loaded  bool
	Loading bool
	Vision  bool
	Audio   bool
	Video   bool
	Err     string // last load error with what to do
}

// Ready reports whether a message can be sent now or after a load.
func (m ModelState) Ready() bool { return m.ID != "" && m.Err == "" }

// Chat is the conversation service.
type Chat interface {
	// Conversations lists conversations whose title or message text match
	// query ("" lists all), newest first.
	Conversations(query string) ([]Conversation, error)
	NewConversation() (Conversation, error)
	Rename(id, title string) error
	Delete(id string) error
	Messages(conversationID string) ([]Message, error)

	// AttachFile reads, checks and stores a dropped or chosen file. An error
	// says in words why it was refused (type, size, or the model cannot take it).
	AttachFile(path string) (Attachment, error)
	// AttachData does the same for bytes (a pasted image, a mic clip).
	AttachData(name string, data []byte) (Attachment, error)

	// Send stores the user turn durably, then streams the answer. An empty
	// conversationID starts a new conversation.
	Send(ctx context.Context, conversationID, text string, atts []Attachment) (Reply, error)
	// Regenerate replaces the answer with id answerID (and anything after it).
	Regenerate(ctx context.Context, conversationID, answerID string) (Reply, error)
	// Edit replaces the user turn userID's text, drops what followed, and answers again.
	Edit(ctx context.Context, conversationID, userID, text string) (Reply, error)
}

// Model is the loaded-model controller the menubar and composer use.
type Model interface {
	State() ModelState
	// Watch calls fn (from any goroutine) whenever the state changes.
	Watch(fn func(ModelState))
	// Use loads a catalog model or a local folder and makes it the default.
	Use(id string) error
	// Preload starts loading the chosen model in the background (the user
	// is about to ask something).
	Preload()
	// Unload frees the model's memory; the next message loads it again.
	Unload()
}

// Fit says whether a model fits this machine.
type Fit string

const (
	FitsWell  Fit = "fits"
	FitsTight Fit = "tight"
	TooBig    Fit = "too big"
)

// CatalogModel is one row of the models view.
type CatalogModel struct {
	ID          string // "mlx-community/gemma-4-e2b-it-4bit" or a folder
	Name        string // "Gemma-4 E2B"
	Blurb       string // "Small and quick · sees and hears"
	DiskBytes   int64
	RAMBytes    int64
	Fit         Fit
	Downloaded  bool
	Recommended bool
	Vision      bool
	Audio       bool
	Video       bool
	Download    *DownloadState // nil when not downloading
}

// DownloadState is a download's progress.
type DownloadState struct {
	Done, Total int64
	BytesPerSec float64
	ETA         time.Duration
	Paused      bool
	Err         string
}

// Catalog is the model hub: the curated list, downloads and the cache.
type Catalog interface {
	Models() ([]CatalogModel, error)
	// Download starts or resumes a download; progress arrives through Watch.
	Download(id string) error
	Pause(id string)
	Cancel(id string)
	Delete(id string) error
	// AddFolder checks a local model folder and returns its catalog id.
	AddFolder(path string) (string, error)
	// Watch calls fn (from any goroutine) when a model's row changes.
	Watch(fn func(CatalogModel))
}

// Recorder captures a voice clip from the microphone.
type Recorder interface {
	// Start begins a clip capped at max. Errors say how to fix a denied
	// permission or a missing device.
	Start(max time.Duration) (Recording, error)
}

// Recording is a clip being captured.
type Recording interface {
	// Levels delivers RMS levels in [0, 1] about 20 times a second and is
	// closed when the recording ends (Stop, Cancel or the cap).
	Levels() <-chan float64
	// Stop ends the clip and returns it as a WAV file.
	Stop() (wav []byte, length time.Duration, err error)
	// Cancel ends the clip and discards it.
	Cancel()
}
