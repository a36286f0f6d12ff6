// Package ui is the contract between Perch's services and its views: the
// ports the app implements (Chat, Model, Catalog, Feedback, Teacher,
// Adapters, Recorder, ToolChats, ToolSettings, SettingsStore), the values
// that cross them (Message, Attachment, TrainRun, Settings, …), the Stream
// that carries an answer from a service's goroutine to a view (refreshes
// coalesced to one per 33 ms frame), and Env, what every view is given.
//
// Data flows one way through it: services publish values and answers; the
// views in the subpackages read them and call the ports back on a user's
// action. ui/look holds the shared look; ui/chat, ui/compose, ui/tools,
// ui/settings, ui/models and ui/teach are the views; ui/window composes them
// into the main window, quick-ask popup and menubar menu. The services
// (app/...) import this package and none of the views.
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
	ErrDetails  string // and the raw error, behind Details
	Stats       *Stats
	Model       string
	Rating      Rating // the user's verdict on this version of an answer
	Edited      bool   // this version is the user's correction
	// View is what of the conversation the model saw for this answer.
	View ContextView
	// ContextFull marks a Failed answer whose conversation no longer fits
	// the model's context (the chat offers to leave the oldest turns out).
	ContextFull bool
	// Version and Versions number an answer's versions (regenerations):
	// this is version Version of Versions (0 or 1 of 1: only one).
	Version, Versions int
	// Tools are the calls the answer made before its Text, in order.
	Tools []ToolCall
}

// ContextView says which part of a conversation a model saw: everything
// from message FromID on, and attachments from message MediaFromID on
// ("" for either: from the start).
type ContextView struct {
	FromID      string
	MediaFromID string
}

// Trimmed reports whether anything was left out.
func (v ContextView) Trimmed() bool { return v.FromID != "" || v.MediaFromID != "" }

// ContextFullError is a stream's error when the conversation no longer
// fits and the user has not agreed to leave old turns out.
type ContextFullError struct{ Msg, Details string }

func (e *ContextFullError) Error() string { return e.Msg }

// Unwrap gives the details as a Problem.
func (e *ContextFullError) Unwrap() error { return &Problem{Summary: e.Msg, Details: e.Details} }

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
	// Defaults are the model's own values for the settings left unset
	// (nil until known).
	Defaults *ModelDefaults
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
	// AllowTrim lets the conversation leave its oldest turns out of the
	// model's view from now on, when it no longer fits.
	AllowTrim(conversationID string) error
	// UseVersion shows version n of answer answerID (its other versions are
	// kept) and returns the answer as it now reads.
	UseVersion(conversationID, answerID string, n int) (Message, error)
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
	Budget      int64 // what this computer can give a model (Teach's Available too)
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
	Err         string // what went wrong and what to do ("" none)
	ErrDetails  string // the raw error, behind Details
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

// ---- Teaching (fine-tuning): feedback, the Teach page, adapters ----

// Rating is the user's verdict on one version of an answer.
type Rating int

const (
	Unrated   Rating = 0
	ThumbUp   Rating = 1
	ThumbDown Rating = -1
)

// Feedback records ratings and corrections on answers, and which adapter
// each conversation answers with.
type Feedback interface {
	// Rate sets the rating of the answer's version in use (Unrated clears it).
	Rate(conversationID, answerID string, r Rating) error
	// Correct keeps the answer as it was and makes text ("what it should
	// have said") its newest version; it returns the message as now shown.
	Correct(conversationID, answerID, text string) (Message, error)
	// Adapter is the adapter conversationID answers with (id "" for the
	// base model); conversationID "" asks for the choice new conversations
	// and quick-ask take.
	Adapter(conversationID string) (id, name string)
	// SetAdapter switches a conversation's adapter ("" for none) and makes
	// it the choice for new conversations, quick-ask and the local API.
	SetAdapter(conversationID, adapterID string) error
}

// TrainMethod is how a run learns.
type TrainMethod string

const (
	MethodSFT  TrainMethod = "sft"  // learn from examples
	MethodDPO  TrainMethod = "dpo"  // learn from likes and dislikes
	MethodORPO TrainMethod = "orpo" // likes and dislikes, and the liked answers as examples
	MethodKTO  TrainMethod = "kto"  // thumbs up and down, each answer on its own (no pairs needed)
)

// TeachSource is what a run learns from: the user's feedback, a folder of
// JSONL files in mlx-lm's formats, or both.
type TeachSource struct {
	Feedback bool
	Folder   string
}

// DataSummary counts what a source gives a method.
type DataSummary struct {
	Examples int // SFT rows: liked answers, corrections, folder rows
	Pairs    int // preference pairs (chosen, rejected)
	Unpaired int // disliked answers with no better version yet
	Rated    int // answers with a thumbs up or down (or a correction): KTO's rows
	Media    int // rows that carry a photo, sound or video
	Preview  []DataPreview
	Notes    []string // what the user should know ("valid.jsonl is missing: …")
}

// Usable is how many rows method m can train on.
func (d DataSummary) Usable(m TrainMethod) int {
	switch m {
	case MethodSFT:
		return d.Examples
	case MethodKTO:
		return d.Rated
	}
	return d.Pairs
}

// DataPreview is one row as the Teach page previews it.
type DataPreview struct {
	Prompt   string
	Chosen   string // the answer to learn (an example's answer)
	Rejected string // "" for an example
	Media    int
	Origin   string // "thumbs up", "your correction", "regenerated", "train.jsonl:4"
}

// TrainPlan is what the Teach page asks the teacher to run.
type TrainPlan struct {
	Base          string // catalog id or folder of the base model
	Name          string // the adapter's name ("my-style")
	Source        TeachSource
	Method        TrainMethod
	Rank          int
	Steps         int
	LearningRate  float64
	LoRAPlusRatio float64 // B's learning rate is this × A's; 1 is plain LoRA
	ValShare      float64 // part of the rows held out for validation
	BatchSize     int
	MaxSeqLen     int
	Beta          float64 // DPO
	Lambda        float64 // ORPO
}

// DefaultLoRAPlusRatio is the learning rate of each adapter's B matrices
// over its A matrices; 1 is plain LoRA. The width study (README; make
// bench, BenchmarkWidthStudy) found LoRA+ at ratios 4 and 16, each at its
// best rate, never reaching the target validation loss in fewer steps
// than plain LoRA at widths 64, 256, 1024 and 1536 (SFT 24 vs 30/30, 18
// vs 18/21, 24 vs 27/27 and 21 vs 24/27 steps, 3 seeds each; DPO equal
// to 0.35, and 9 vs 11/12 steps to 0.1 at 1536), so the preset is plain
// LoRA.
const DefaultLoRAPlusRatio = 1

// TrainEstimate is what a plan costs on this machine.
type TrainEstimate struct {
	Fits      bool
	Reason    string // why it will not run, and what to do ("" when it will)
	Memory    int64  // peak bytes
	Available int64  // what this machine can give (the Models page's Budget too)
	Tight     bool   // it fits, with little room: close other apps
	Duration  time.Duration
	Basis     string // how the time was estimated
	Rows      int    // training rows after the validation share
	ValRows   int
}

// RunState says where a training run stands.
type RunState string

const (
	RunPreparing   RunState = "preparing" // building the data, loading the model
	RunTraining    RunState = "training"
	RunPaused      RunState = "paused"
	RunDone        RunState = "done"
	RunFailed      RunState = "failed"
	RunStopped     RunState = "stopped"
	RunInterrupted RunState = "interrupted" // Perch quit or crashed mid-run
)

// Active reports whether the run is still going (or paused).
func (s RunState) Active() bool { return s == RunPreparing || s == RunTraining || s == RunPaused }

// TrainRun is a run as the Teach page shows it.
type TrainRun struct {
	ID           string
	Plan         TrainPlan
	BaseName     string // "Gemma-4 E2B"
	State        RunState
	Step, Steps  int
	TokensPerSec float64
	ETA          time.Duration
	Started      time.Time
	Ended        time.Time // zero while the run goes
	Err          string    // for Failed: what went wrong and what to do
	// Yielding: the run is paused between steps while a chat is answered.
	Yielding bool
	BestVal  float64 // NaN until validated
	BestStep int
	// LastCheckpoint is the newest complete checkpoint's step (0 none);
	// an interrupted or stopped run resumes from it.
	LastCheckpoint int
	AdapterID      string // the adapter the run made (once it saved one)
}

// TrainPoint is one step's metrics; NaN where not measured.
type TrainPoint struct {
	Step    int
	Loss    float64
	ValLoss float64
	Margin  float64 // DPO/ORPO reward margin
	// MarginLabel names what Margin is, as the method declares it ("reward
	// margin", "log-odds ratio", …; "" for stored points).
	MarginLabel string
}

// TrainUpdate is what a watcher gets as a run goes: its state and the
// points since the last update.
type TrainUpdate struct {
	Run    TrainRun
	Points []TrainPoint
}

// TeachBase is a model one can train on.
type TeachBase struct {
	ID   string
	Name string
}

// Teacher is the fine-tuning service behind the Teach page.
type Teacher interface {
	Bases() ([]TeachBase, error)
	// Summarize counts what src gives (a folder is checked line by line).
	Summarize(src TeachSource, valShare float64) (DataSummary, error)
	// Estimate says how long and how much memory plan takes here, and
	// refuses it with the reason when it will not run.
	Estimate(plan TrainPlan) (TrainEstimate, error)
	Start(plan TrainPlan) (TrainRun, error)
	Pause(runID string) error
	Resume(runID string) error
	Stop(runID string) error
	// ResumeFromCheckpoint continues an interrupted or stopped run from its
	// last complete checkpoint.
	ResumeFromCheckpoint(runID string) (TrainRun, error)
	Runs() ([]TrainRun, error)
	Points(runID string) ([]TrainPoint, error)
	// Watch calls fn (from any goroutine) as runs change.
	Watch(fn func(TrainUpdate))
}

// AdapterInfo is an adapter the user owns.
type AdapterInfo struct {
	ID       string
	Name     string // "my-style"
	Base     string // the base model's id
	BaseName string
	Method   TrainMethod // "" for an imported adapter of unknown making
	Created  time.Time
	Steps    int
	BestVal  float64 // NaN when unknown
	BestStep int     // the checkpoint with BestVal
	Size     int64
	Rank     int
}

// Adapters is the user's adapter library.
type Adapters interface {
	Adapters() ([]AdapterInfo, error)
	RenameAdapter(id, name string) error
	DeleteAdapter(id string) error
	// ExportAdapter writes an mlx-lm adapter folder inside dir and returns its path.
	ExportAdapter(id, dir string) (string, error)
	// ImportAdapter copies an mlx-lm adapter folder into the library.
	ImportAdapter(dir string) (AdapterInfo, error)
}

// Problem is a failure in the user's words: what went wrong and what to do
// (Summary, shown), and the raw error (Details, behind a disclosure).
type Problem struct {
	Summary string
	Details string
}

func (p *Problem) Error() string { return p.Summary }
