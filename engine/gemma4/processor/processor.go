// Package processor is Gemma-4's processor: chat messages and their
// attachments in, the token ids the model reads and the media its towers
// take (gemma4.Media) out, in one pass on the caller's goroutine (chat
// template, media decoders from media/, placeholder expansion), with
// prepared media cached by content hash. It reads the model's config
// (gemma4.Config) and never touches a tensor, so it serves the engine's
// requests and training rows (engine/trainset) alike.
package processor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"perch/engine/chattemplate"
	"perch/engine/gemma4"
	"perch/engine/prompt"
	"perch/engine/tokenizer"
	"perch/media/logmel"
	"perch/media/lru"
	"perch/media/picture"
)

// Processor is Gemma-4's processor: it turns chat messages into the ids the
// model reads and the media its towers take, in one pass on the caller's
// goroutine (the chat template, each attachment decoded and preprocessed,
// each placeholder expanded into its soft-token run while the rows are
// recorded). It never touches a tensor, so it serves the engine's requests
// and training rows alike. Safe for concurrent use.
//
// Port of Hugging Face's Gemma4Processor (research/gemma4.md §4); parity
// notes: the rendered text is split at media placeholders and each text
// piece tokenized as the whole string would be (placeholders are special
// tokens, so the tokenizer splits there anyway).
type Processor struct {
	cfg    *gemma4.Config
	vision *gemma4.VisionConfig // nil without vision
	audio  bool
	// unifiedAudio: audio goes through the 12B's encoder-free embedder
	// (raw 40 ms waveform rows) rather than the conformer.
	unifiedAudio bool
	tok          *tokenizer.Tokenizer
	tmpl         *chattemplate.Template
	pc           processorConfig
	mel          *logmel.Extractor
	ids          specialIDs
	text         placeholderText

	media    *lru.Cache[*gemma4.Media] // prepared attachments by content key
	pictures *picture.Pool
	maxPix   int64
}

// Options tune a Processor; zero values take the defaults.
type Options struct {
	// MediaCacheBytes bounds the prepared attachments kept by content hash,
	// so a later turn about the same photo decodes nothing (default 128 MiB).
	MediaCacheBytes int64
	// Pictures decodes images (bounded decodes at once, recent decodes
	// kept); share one with whatever else decodes the same files (the
	// chat's thumbnails). nil: a pool of the processor's own.
	Pictures *picture.Pool
	// MaxRequestPixels bounds the decoded pixels of one request's images,
	// checked from their headers before any is decoded (default 128 MP).
	MaxRequestPixels int64
}

// processorConfig is what processor_config.json says about media inputs.
type processorConfig struct {
	ImageProcessor struct {
		MaxSoftTokens int `json:"max_soft_tokens"`
	} `json:"image_processor"`
	AudioMsPerToken int `json:"audio_ms_per_token"`
	AudioSeqLength  int `json:"audio_seq_length"`
}

// Load reads what the processor needs from a model folder: config,
// tokenizer, chat template and processor_config.json.
func Load(dir string, o Options) (*Processor, error) {
	cfg, err := gemma4.LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.Load(dir)
	if err != nil {
		return nil, err
	}
	return New(dir, cfg, tok, o)
}

// New is Load for a config and tokenizer already loaded.
func New(dir string, cfg *gemma4.Config, tok *tokenizer.Tokenizer, o Options) (*Processor, error) {
	if o.MediaCacheBytes <= 0 {
		o.MediaCacheBytes = 128 << 20
	}
	if o.Pictures == nil {
		o.Pictures = picture.NewPool(picture.PoolOptions{})
	}
	if o.MaxRequestPixels <= 0 {
		o.MaxRequestPixels = 128 << 20
	}
	p := &Processor{cfg: cfg, tok: tok, media: lru.New[*gemma4.Media](o.MediaCacheBytes, nil),
		pictures: o.Pictures, maxPix: o.MaxRequestPixels}
	var err error
	if p.tmpl, err = chattemplate.Load(dir); err != nil {
		return nil, fmt.Errorf("chat template: %w", err)
	}
	p.vision = cfg.Vision // parsed with the config (its image budget filled in)
	if p.pc, err = loadProcessorConfig(dir); err != nil {
		return nil, err
	}
	if p.mel, err = logmel.New(logmel.Gemma4); err != nil {
		return nil, err
	}
	if cfg.Audio != nil {
		p.audio, p.unifiedAudio = true, cfg.Audio.Unified()
	}
	p.ids = specialIDsOf(cfg, tok)
	p.text = p.ids.text(tok)
	return p, nil
}

// loadProcessorConfig reads processor_config.json; absent, the Gemma-4
// processors' own values apply (40 ms per audio token, at most 750).
func loadProcessorConfig(dir string) (processorConfig, error) {
	var p processorConfig
	data, err := os.ReadFile(filepath.Join(dir, "processor_config.json"))
	if err == nil {
		if len(data) > 1<<20 {
			return p, fmt.Errorf("processor_config.json is %d bytes, over the 1 MiB limit", len(data))
		}
		if err := json.Unmarshal(data, &p); err != nil {
			return p, fmt.Errorf("processor_config.json: %w", err)
		}
	} else if !os.IsNotExist(err) {
		return p, err
	}
	if p.AudioMsPerToken <= 0 {
		p.AudioMsPerToken = 40
	}
	if p.AudioSeqLength <= 0 {
		p.AudioSeqLength = 750
	}
	return p, nil
}

// Tokenizer is the processor's tokenizer.
func (p *Processor) Tokenizer() *tokenizer.Tokenizer { return p.tok }

// Vision, Audio report what the model can take.
func (p *Processor) Vision() bool { return p.vision != nil }
func (p *Processor) Audio() bool  { return p.audio }

// PrepareOptions are a request's settings for Prepare.
type PrepareOptions struct {
	// PromptIDs, when set, is fed as is (no chat template); the messages'
	// media parts fill its placeholder ids in order.
	PromptIDs      []int32
	EnableThinking bool
	ImageTokens    int     // image soft-token budget (70/140/280/560/1120); 0: the model's
	VideoFPS       float64 // 0: 2 frames a second
	MaxFrames      int     // 0: 32
	NoVideoAudio   bool    // leave a video's sound out even when the model can hear
	// Answered: the last message is an answer to learn (a training row). It
	// is rendered after its prompt with no generation prompt, and
	// Prepared.AnswerStart is the index of its first token; the ids before
	// it are exactly what a chat request for messages[:-1] would feed.
	Answered bool
	// Context, when set, refuses a prompt of Context tokens or more, from
	// the text's length alone where that suffices (before rendering,
	// decoding or tokenizing).
	Context int
	// Tools are OpenAI function tools ({"type": "function", "function":
	// {name, description, parameters}}) the template declares in the system
	// turn; their schemas must already carry what the template reads (type).
	Tools []json.RawMessage
}

// Prepared is a prompt ready for the model.
type Prepared struct {
	IDs []int32
	// Media are the attachments in prompt order (a video's sound track
	// follows it as its own entry), each with the positions of its rows.
	Media []Placed
	// Blocks gives each position's image or video-frame block (those attend
	// both ways on models with bidirectional vision), -1 elsewhere; nil
	// when the prompt has no visual media.
	Blocks []int
	// PLEIDs are IDs with every placeholder replaced by the pad id (the
	// per-layer embeddings' input); nil when the prompt has no media.
	PLEIDs []int32
	// ByKind counts prompt tokens per modality: text, image, audio, video.
	ByKind map[string]int
	// AnswerStart is where the answer's tokens begin (PrepareOptions.Answered).
	AnswerStart int
}

// Placed is one attachment and where its soft tokens sit in the prompt.
type Placed struct {
	*gemma4.Media
	Name string // for messages: the file name or URL, else "image 2"
	Rows []int  // prompt positions, ascending; as many as the tower gives rows
}

// ContextError refuses a prompt that leaves no room in the context.
type ContextError struct {
	Prompt  int  // prompt tokens (media expanded), or a lower bound when AtLeast
	Context int  // what the context holds
	AtLeast bool // Prompt was bounded from the text's length, before tokenizing
}

func (e *ContextError) Error() string {
	least := ""
	if e.AtLeast {
		least = "at least "
	}
	return fmt.Sprintf("the prompt is %s%d tokens but the context holds %d: shorten the conversation or start a new one",
		least, e.Prompt, e.Context)
}

// Prepare renders messages with the model's chat template, prepares every
// attachment, and expands each placeholder into its soft-token run.
func (p *Processor) Prepare(ctx context.Context, msgs []prompt.Message, o PrepareOptions) (*Prepared, error) {
	prepares.Add(1)
	least, err := p.checkLength(msgs, o)
	if err != nil {
		return nil, err
	}
	items, err := p.prepareMedia(ctx, msgs, o, least)
	if err != nil {
		return nil, err
	}
	b := newBuilder(p, items)
	switch {
	case len(o.PromptIDs) > 0:
		if o.Answered {
			return nil, errors.New("raw prompt ids cannot mark an answer")
		}
		err = b.expandIDs(o.PromptIDs)
	case len(msgs) == 0:
		return nil, errors.New("the request has no messages")
	case o.Answered:
		err = p.renderAnswered(ctx, b, msgs, o)
	default:
		var text string
		if text, err = p.render(ctx, msgs, o, true); err == nil {
			err = b.expandText(text)
		}
	}
	if err != nil {
		return nil, err
	}
	prep, err := b.finish()
	if err != nil {
		return nil, err
	}
	if o.Context > 0 && len(prep.IDs) >= o.Context {
		return nil, &ContextError{Prompt: len(prep.IDs), Context: o.Context}
	}
	return prep, nil
}

// checkLength refuses a prompt whose text alone is too long for the
// context: every token covers at most MaxTokenBytes bytes of text. It
// returns the text's least token count otherwise.
func (p *Processor) checkLength(msgs []prompt.Message, o PrepareOptions) (int, error) {
	if o.Context <= 0 {
		return 0, nil
	}
	if len(o.PromptIDs) >= o.Context {
		return 0, &ContextError{Prompt: len(o.PromptIDs), Context: o.Context}
	}
	per := p.tok.MaxTokenBytes()
	if len(o.PromptIDs) > 0 {
		return len(o.PromptIDs), nil
	}
	if per <= 0 {
		return 0, nil
	}
	var n int
	for _, m := range msgs {
		n += len(m.Thinking)
		for _, part := range m.Content {
			n += len(part.Text)
		}
		for _, c := range m.ToolCalls {
			n += len(c.Arguments)
		}
	}
	least := n / per
	if least >= o.Context {
		return 0, &ContextError{Prompt: least, Context: o.Context, AtLeast: true}
	}
	return least, nil
}

// render applies the chat template.
func (p *Processor) render(ctx context.Context, msgs []prompt.Message, o PrepareOptions, addGen bool) (string, error) {
	in := chattemplate.Input{AddGenerationPrompt: addGen, Tools: o.Tools}
	if o.EnableThinking {
		in.EnableThinking = chattemplate.Bool(true)
	}
	for _, m := range msgs {
		tm := chattemplate.Message{Role: string(m.Role), Reasoning: m.Thinking, ToolCallID: m.ToolCallID, Name: m.ToolName}
		for _, c := range m.ToolCalls {
			tm.ToolCalls = append(tm.ToolCalls, chattemplate.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		switch {
		case len(m.Content) == 0:
			// no content (an assistant turn of only tool calls)
		case len(m.Content) == 1 && m.Content[0].Type == prompt.Text:
			tm.Content = m.Content[0].Text
		default:
			tm.Parts = []chattemplate.Part{}
			for _, part := range m.Content {
				tm.Parts = append(tm.Parts, chattemplate.Part{Type: string(part.Type), Text: part.Text})
			}
		}
		in.Messages = append(in.Messages, tm)
	}
	text, err := p.tmpl.Render(ctx, in)
	if err != nil {
		return "", fmt.Errorf("chat template: %w", err)
	}
	return text, nil
}

// renderAnswered lays out a training row: the prompt exactly as a chat
// request for messages[:-1] renders it (generation prompt included), then
// the last turn's rendering after the part it shares with the generation
// prompt. (Without thinking, Gemma-4's generation prompt opens an empty
// thought channel that a rendered turn lacks; the model must learn what
// follows the prompt it will really see.)
func (p *Processor) renderAnswered(ctx context.Context, b *builder, msgs []prompt.Message, o PrepareOptions) error {
	last := msgs[len(msgs)-1]
	if last.Role != prompt.Assistant {
		return fmt.Errorf("the last message is a %s turn, not the answer to learn", last.Role)
	}
	var base, head, whole string
	var err error
	if len(msgs) > 1 {
		if base, err = p.render(ctx, msgs[:len(msgs)-1], o, false); err != nil {
			return err
		}
	}
	if head, err = p.render(ctx, msgs[:len(msgs)-1], o, true); err != nil {
		return err
	}
	if whole, err = p.render(ctx, msgs, o, false); err != nil {
		return err
	}
	gen, ok1 := strings.CutPrefix(head, base)
	turn, ok2 := strings.CutPrefix(whole, base)
	if !ok1 || !ok2 {
		return errors.New("the chat template does not render the conversation as its earlier turns plus the last")
	}
	k := 0
	for k < len(gen) && k < len(turn) && gen[k] == turn[k] {
		k++
	}
	for k > 0 && !utf8.RuneStart(turn[k]) && k < len(turn) {
		k--
	}
	if err := b.expandText(head); err != nil {
		return err
	}
	b.flush()
	b.answerStart = len(b.ids)
	return b.expandText(turn[k:])
}

// prepares counts Prepare calls.
var prepares atomic.Int64

// Prepares is how many prompts this process has prepared (rendered,
// tokenised, media laid out): walk tests count the prepares of one send.
func Prepares() int64 { return prepares.Load() }
