// Package engine runs Gemma-4 generation: one goroutine, locked to one OS
// thread, owns the tensor backend and serves every request from one bounded
// queue; while no request waits it runs its one background task (a
// fine-tuning run, a step at a time). Callers get Go values and typed
// events; no tensor crosses this API.
//
// It owns the queue and everything that runs on the engine's thread:
// generation (Request in → one Prepare by engine/gemma4/processor → the
// model on the backend → sampler, grammar mask → Events out), the training
// task (TrainRequest in → rows from engine/trainset → engine/train's steps
// between requests → an adapter and events out), adapters, fusing and
// memory. Front ends and services call it; it calls nothing above it.
package engine

import (
	"context"
	"errors"
	"time"

	"perch/engine/gemma4/processor"
	"perch/engine/prompt"
	"perch/engine/sample"
	"perch/engine/toolcall"
)

// ErrBusy is returned by Generate at once when the request queue, or the
// set of requests being prepared, is full.
var ErrBusy = errors.New("engine busy: the request queue is full, try again shortly")

// ErrClosed is returned by Generate after Close.
var ErrClosed = errors.New("engine closed")

// ContextError is Generate's refusal of a prompt that leaves no room in the
// model's context (counted, or bounded from the text's length).
type ContextError = processor.ContextError

// Generator is what the app, the UI and the local API server talk to.
type Generator interface {
	// Generate validates and prepares the request on the caller's goroutine,
	// then enqueues it. The channel carries Queued/Progress/Token events and
	// ends with exactly one Done or Error event, then closes; then
	// req.OnDone runs. Cancelling ctx stops the request between prefill
	// chunks and decode steps.
	Generate(ctx context.Context, req Request) (<-chan Event, error)
}

// The request's content types are package prompt's (the processor and the
// training data speak them too); these names keep the engine's API whole.
type (
	Role     = prompt.Role
	PartType = prompt.PartType
	Part     = prompt.Part
	Message  = prompt.Message
)

const (
	RoleSystem    = prompt.System
	RoleUser      = prompt.User
	RoleAssistant = prompt.Assistant
	RoleTool      = prompt.Tool

	PartText  = prompt.Text
	PartImage = prompt.Image
	PartAudio = prompt.Audio
	PartVideo = prompt.Video
)

// Text returns a message holding only text.
func Text(role Role, s string) Message { return prompt.TextMessage(role, s) }

// Sampling overrides the model's generation_config defaults: the sampler's
// own options struct, so a setting is one field from the API to the
// sampler. A nil field keeps the default; Temperature 0 is greedy.
type Sampling = sample.Options

// Request is one generation.
type Request struct {
	Messages []Message
	// PromptIDs, when set, is fed as is (no chat template); Messages' media
	// parts then fill the placeholder ids in order.
	PromptIDs      []int32
	Sampling       Sampling
	MaxTokens      int  // 0: the engine's default
	IgnoreEOS      bool // decode through stop tokens
	EnableThinking bool
	Stop           []string // extra stop strings (OpenAI "stop")
	// MaxSoftTokens is the image soft-token budget (70/140/280/560/1120); 0: model default.
	MaxSoftTokens int
	VideoFPS      float64 // 0: default 2
	MaxFrames     int     // 0: default 32
	// NoVideoAudio leaves a video's sound out even when the model can hear.
	NoVideoAudio bool
	// DumpLogits, when set, receives the prefill's last-position logits.
	DumpLogits func([]float32)
	// Adapter is a LoRA adapter folder (Perch's or mlx-lm's) this request
	// runs with; "" takes the engine's Options.Adapter (often none).
	Adapter string
	// Tools the model may call, rendered into the system turn by the
	// checkpoint's template; ToolChoice says whether it must.
	Tools      []Tool
	ToolChoice ToolChoice
	// ParallelToolCalls false allows at most one call per answer.
	ParallelToolCalls *bool
	// Fit, when set, is the request's context policy: Generate prepares the
	// prompt (render, tokenise, media) and, while the policy asks for less
	// because the prompt does not fit, prepares what it keeps instead. A
	// prompt that fits is prepared once. Ignored with PromptIDs.
	Fit ContextPolicy
	// ResponseSchema, when set, constrains the answer to JSON matching this
	// JSON Schema ({} or {"type":"object"} for any object: json_object).
	ResponseSchema []byte
	// OnDone, when set, is called once when the request is over: after its
	// channel's last event and close, or before Generate returns an error.
	// (The app gives the model back to its idle timer this way.)
	OnDone func()
}

// ContextPolicy decides what of a conversation a request sends, from how
// its prepared prompt fills the context (app/contextfit keeps Perch's).
type ContextPolicy interface {
	// Fit is given the messages just prepared and their measure. It
	// returns done when they may go as they are, or the messages to
	// prepare instead; an error when nothing it may leave out makes them fit.
	Fit(msgs []Message, m Measure) (next []Message, done bool, err error)
}

// Tool is a function the model may call (OpenAI's function tool).
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments; nil means any object.
	Parameters []byte
	// Strict constrains the arguments to Parameters even under ToolChoice auto.
	Strict bool
}

// ToolCall is a call the model made; Arguments is a JSON object.
type ToolCall = prompt.ToolCall

// ToolChoiceMode is OpenAI's tool_choice.
type ToolChoiceMode string

const (
	ToolAuto     ToolChoiceMode = ""         // the model decides (OpenAI "auto")
	ToolNone     ToolChoiceMode = "none"     // tools are shown, no call is made
	ToolRequired ToolChoiceMode = "required" // at least one call
	ToolFunction ToolChoiceMode = "function" // a call of ToolChoice.Name
)

// ToolChoice says whether and which tool the answer must call.
type ToolChoice struct {
	Mode ToolChoiceMode
	Name string // with ToolFunction
}

// Stage names a step of a request's progress (Progress events); Collector's
// Status puts it in the user's words.
type Stage string

const (
	StageLoad    Stage = "load"    // the model is loading (front ends that load on demand send it)
	StageImage   Stage = "image"   // an image through the vision tower
	StageAudio   Stage = "audio"   // a clip through the audio tower
	StageVideo   Stage = "video"   // a video's frames through the vision tower
	StagePrefill Stage = "prefill" // reading the prompt
)

// EventKind tells which fields of an Event are set.
type EventKind int

const (
	EventQueued   EventKind = iota // Position
	EventProgress                  // Stage, Fraction
	EventToken                     // Token
	EventDone                      // Stats, StopReason
	EventError                     // Err
	// EventToolCall is a tool call the model made (Call), sent as soon as
	// it closes. A call that does not parse has Call.Err and Call.Raw set
	// (its text, markup included); the answer goes on.
	EventToolCall
)

// Token is one generated token and the text it adds.
type Token struct {
	ID       int32
	Text     string // UTF-8-safe delta (may be empty while a character is incomplete)
	Thinking bool   // inside the model's thought channel
}

// Stop reasons reported in Done events.
const (
	StopEOS       = "stop"       // a stop token or stop string
	StopMaxTokens = "length"     // MaxTokens reached
	StopCancelled = "cancelled"  // ctx cancelled
	StopToolCalls = "tool_calls" // the model called tools and handed over (<|tool_response>)
)

// Stats summarise a finished generation.
type Stats struct {
	PromptTokens    int
	GeneratedTokens int
	TokenIDs        []int32
	TimeToFirst     time.Duration
	PrefillTokS     float64
	DecodeTokS      float64
	PeakMemory      int64         // bytes, backend's own accounting
	HostPerStep     time.Duration // per decode step, time not spent waiting on the backend
	Backend         string
	TowerTime       time.Duration
	EncoderHits     int
	PrefixReused    int            // prompt tokens taken from the prefix cache
	PromptByKind    map[string]int // prompt tokens per modality: text, image, audio, video
}

// Event is one message on a Generate channel.
type Event struct {
	Kind       EventKind
	Position   int
	Stage      Stage
	Fraction   float64
	Token      Token
	Stats      *Stats
	StopReason string
	Err        error
	Call       ParsedCall
}

// ParsedCall is a tool call read from the model's output: an ID, the
// function's name and its arguments as a JSON object, or Err and the Raw
// text when the call does not parse.
type ParsedCall = toolcall.Call
