package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"perch/engine"
)

// Limits on a request beyond the body size, so a small body cannot ask
// for unbounded work.
const (
	maxMessages   = 4096
	maxParts      = 512
	maxMediaParts = 64
	maxStops      = 16
	maxStopBytes  = 256
	maxMaxTokens  = 1 << 20
)

// chatRequest is OpenAI's POST /v1/chat/completions body (the fields we
// read; unknown fields are ignored, as OpenAI-compatible servers do).
type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	Stream              bool            `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	TopK                *int            `json:"top_k"` // LM Studio / Ollama extension
	MinP                *float64        `json:"min_p"`
	RepetitionPenalty   *float64        `json:"repetition_penalty"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Seed                *int64          `json:"seed"`
	Stop                json.RawMessage `json:"stop"`
	N                   *int            `json:"n"`
	Tools               []toolDef       `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls"`
	ResponseFormat      *responseFormat `json:"response_format"`
	Logprobs            bool            `json:"logprobs"`
	// Truncation "auto" leaves the oldest turns out when the conversation
	// does not fit the context (Perch's policy; OpenAI's Responses API
	// spelling); "disabled" or absent refuses the request instead.
	Truncation         string `json:"truncation"`
	ChatTemplateKwargs *struct {
		EnableThinking *bool `json:"enable_thinking"`
	} `json:"chat_template_kwargs"` // vLLM's spelling for the thinking switch
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ReasoningContent string          `json:"reasoning_content"`
	ToolCalls        []wireToolCall  `json:"tool_calls"`
	ToolCallID       string          `json:"tool_call_id"`
	Name             string          `json:"name"`
}

type contentPart struct {
	Type       string          `json:"type"`
	Text       *string         `json:"text"`
	ImageURL   json.RawMessage `json:"image_url"`
	AudioURL   json.RawMessage `json:"audio_url"`
	VideoURL   json.RawMessage `json:"video_url"`
	InputAudio *struct {
		Data   string `json:"data"`
		Format string `json:"format"`
	} `json:"input_audio"`
}

// mediaRef is a URL to fetch into one message part.
type mediaRef struct {
	msg, part int
	url       string
	kind      engine.PartType
}

// chatCall is a parsed, validated request: the engine request with media
// parts still to be filled from mediaRefs.
type chatCall struct {
	req          engine.Request
	media        []mediaRef
	stream       bool
	includeUsage bool
	model        string
	truncate     bool // leave old turns out rather than refuse a full context
}

// requestError is a 400 with OpenAI's param field.
type requestError struct {
	param string
	msg   string
}

func (e *requestError) Error() string { return e.msg }

func badParam(param, format string, a ...any) error {
	return &requestError{param: param, msg: fmt.Sprintf(format, a...)}
}

// parseChatRequest validates a chat completions body and builds the
// engine request. maxMedia caps one inline (base64) media item.
func parseChatRequest(body []byte, maxMedia int64) (*chatCall, error) {
	var cr chatRequest
	// Unmarshal, not a Decoder: no second buffered copy of a large body
	// (it refuses a second JSON value after the first as well).
	if err := json.Unmarshal(body, &cr); err != nil {
		return nil, badParam("", "the body is not a valid chat completion request: %v", err)
	}
	c := &chatCall{stream: cr.Stream, model: cr.Model}
	if cr.StreamOptions != nil {
		c.includeUsage = cr.StreamOptions.IncludeUsage && cr.Stream
	}
	if err := c.readOptions(&cr); err != nil {
		return nil, err
	}
	if len(cr.Messages) == 0 {
		return nil, badParam("messages", "messages must hold at least one message")
	}
	if len(cr.Messages) > maxMessages {
		return nil, badParam("messages", "%d messages; the limit is %d", len(cr.Messages), maxMessages)
	}
	for i, m := range cr.Messages {
		msg, err := c.readMessage(i, m, maxMedia)
		if err != nil {
			return nil, err
		}
		c.req.Messages = append(c.req.Messages, msg)
	}
	if len(c.media) > maxMediaParts {
		return nil, badParam("messages", "%d media parts; the limit is %d", len(c.media), maxMediaParts)
	}
	return c, nil
}

func (c *chatCall) readOptions(cr *chatRequest) error {
	s := &c.req.Sampling
	if v := cr.Temperature; v != nil {
		if !(*v >= 0 && *v <= 2) {
			return badParam("temperature", "temperature must be between 0 and 2")
		}
		s.Temperature = ptr(float32(*v))
	}
	if v := cr.TopP; v != nil {
		if !(*v > 0 && *v <= 1) {
			return badParam("top_p", "top_p must be in (0, 1]")
		}
		s.TopP = ptr(float32(*v))
	}
	if v := cr.TopK; v != nil {
		if *v < 0 || *v > 1<<20 {
			return badParam("top_k", "top_k must be 0 (off) or a positive count")
		}
		s.TopK = ptr(*v)
	}
	if v := cr.MinP; v != nil {
		if !(*v >= 0 && *v <= 1) {
			return badParam("min_p", "min_p must be between 0 and 1")
		}
		s.MinP = ptr(float32(*v))
	}
	if v := cr.RepetitionPenalty; v != nil {
		if !(*v > 0 && *v <= 10) {
			return badParam("repetition_penalty", "repetition_penalty must be in (0, 10]")
		}
		s.RepetitionPenalty = ptr(float32(*v))
	}
	if v := cr.Seed; v != nil {
		s.Seed = ptr(uint64(*v)) // negative seeds wrap, as numpy's do
	}
	for _, mt := range []struct {
		name string
		v    *int
	}{{"max_tokens", cr.MaxTokens}, {"max_completion_tokens", cr.MaxCompletionTokens}} {
		if mt.v == nil {
			continue
		}
		if *mt.v < 1 || *mt.v > maxMaxTokens {
			return badParam(mt.name, "%s must be between 1 and %d", mt.name, maxMaxTokens)
		}
		c.req.MaxTokens = *mt.v // max_completion_tokens, read last, wins
	}
	if cr.N != nil && *cr.N != 1 {
		return badParam("n", "only n=1 is supported")
	}
	if err := c.readTools(cr); err != nil {
		return err
	}
	switch cr.Truncation {
	case "", "disabled":
	case "auto":
		c.truncate = true
	default:
		return badParam("truncation", "truncation must be \"auto\" or \"disabled\"")
	}
	if cr.Logprobs {
		return badParam("logprobs", "logprobs are not supported")
	}
	if k := cr.ChatTemplateKwargs; k != nil && k.EnableThinking != nil {
		c.req.EnableThinking = *k.EnableThinking
	}
	stops, err := parseStop(cr.Stop)
	if err != nil {
		return err
	}
	c.req.Stop = stops
	return nil
}

func ptr[T any](v T) *T { return &v }

// parseStop accepts a string, an array of strings, or null.
func parseStop(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		raw = []byte(`[` + string(raw) + `]`)
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, badParam("stop", "stop must be a string or an array of strings")
	}
	if len(list) > maxStops {
		return nil, badParam("stop", "%d stop strings; the limit is %d", len(list), maxStops)
	}
	var out []string
	for _, s := range list {
		if len(s) > maxStopBytes {
			return nil, badParam("stop", "a stop string is longer than %d bytes", maxStopBytes)
		}
		if s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

func (c *chatCall) readMessage(i int, m chatMessage, maxMedia int64) (engine.Message, error) {
	param := fmt.Sprintf("messages[%d]", i)
	var msg engine.Message
	switch m.Role {
	case "system", "developer":
		msg.Role = engine.RoleSystem
	case "user":
		msg.Role = engine.RoleUser
	case "assistant":
		msg.Role = engine.RoleAssistant
		msg.Thinking = m.ReasoningContent
		calls, err := readToolCalls(param, m.ToolCalls)
		if err != nil {
			return msg, err
		}
		msg.ToolCalls = calls
	case "tool":
		msg.Role, msg.ToolCallID, msg.ToolName = engine.RoleTool, m.ToolCallID, m.Name
	default:
		return msg, badParam(param+".role", "role %q is not one of system, developer, user, assistant, tool", truncate(m.Role, 40))
	}
	raw := bytes.TrimSpace(m.Content)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		if msg.Role != engine.RoleAssistant {
			return msg, badParam(param+".content", "content is missing")
		}
		return msg, nil
	case raw[0] == '"':
		s, err := jsonString(raw)
		if err != nil {
			return msg, badParam(param+".content", "content: %v", err)
		}
		msg.Content = []engine.Part{{Type: engine.PartText, Text: s}}
		return msg, nil
	}
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return msg, badParam(param+".content", "content must be a string or an array of content parts")
	}
	if len(parts) > maxParts {
		return msg, badParam(param+".content", "%d content parts; the limit is %d", len(parts), maxParts)
	}
	for j, p := range parts {
		pp := fmt.Sprintf("%s.content[%d]", param, j)
		part, ref, err := readPart(pp, p, maxMedia)
		if err != nil {
			return msg, err
		}
		if part.Type != engine.PartText && msg.Role != engine.RoleUser {
			return msg, badParam(pp, "media parts are only accepted in user messages")
		}
		if ref != "" {
			c.media = append(c.media, mediaRef{msg: i, part: len(msg.Content), url: ref, kind: part.Type})
		}
		msg.Content = append(msg.Content, part)
	}
	return msg, nil
}

// readPart converts one content part; for URL media it returns the URL to
// fetch and a part whose Data is still empty.
func readPart(param string, p contentPart, maxMedia int64) (engine.Part, string, error) {
	switch p.Type {
	case "text", "input_text":
		if p.Text == nil {
			return engine.Part{}, "", badParam(param+".text", "a text part needs text")
		}
		return engine.Part{Type: engine.PartText, Text: *p.Text}, "", nil
	case "image_url", "input_image":
		u, err := partURL(param+".image_url", p.ImageURL)
		return engine.Part{Type: engine.PartImage, Name: "image"}, u, err
	case "audio_url":
		u, err := partURL(param+".audio_url", p.AudioURL)
		return engine.Part{Type: engine.PartAudio, Name: "audio"}, u, err
	case "video_url":
		u, err := partURL(param+".video_url", p.VideoURL)
		return engine.Part{Type: engine.PartVideo, Name: "video"}, u, err
	case "input_audio":
		if p.InputAudio == nil || p.InputAudio.Data == "" {
			return engine.Part{}, "", badParam(param+".input_audio", "input_audio needs base64 data")
		}
		d := strings.TrimSpace(p.InputAudio.Data)
		if len(d) >= 5 && strings.EqualFold(d[:5], "data:") {
			return engine.Part{Type: engine.PartAudio, Name: "input_audio"}, d, nil
		}
		data, err := decodeBase64(d, maxMedia)
		if err != nil {
			return engine.Part{}, "", badParam(param+".input_audio.data", "%v", err)
		}
		return engine.Part{Type: engine.PartAudio, Data: data, Name: "input_audio." + truncate(p.InputAudio.Format, 10)}, "", nil
	}
	return engine.Part{}, "", badParam(param+".type", "content part type %q is not supported (use text, image_url, input_audio, audio_url or video_url)", truncate(p.Type, 40))
}

// jsonString decodes a JSON string the body's parse has already checked;
// one without escapes (most text, and all of a long pasted document's bulk)
// is taken as is rather than scanned and unescaped again.
func jsonString(raw []byte) (string, error) {
	if len(raw) >= 2 && raw[len(raw)-1] == '"' && bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// partURL reads {"url": "..."} or a bare string.
func partURL(param string, raw json.RawMessage) (string, error) {
	var u string
	if err := json.Unmarshal(raw, &u); err != nil || u == "" {
		var obj struct {
			URL string `json:"url"`
		}
		if err := json.Unmarshal(raw, &obj); err != nil || obj.URL == "" {
			return "", badParam(param, "expected {\"url\": \"...\"}")
		}
		u = obj.URL
	}
	return u, nil
}

var errBase64TooLarge = errors.New("inline media too large")

// decodeBase64 checks the decoded size against the cap before decoding.
func decodeBase64(s string, maxBytes int64) ([]byte, error) {
	if int64(len(s))/4*3 > maxBytes {
		return nil, fmt.Errorf("%w: about %d bytes, the limit is %d", errBase64TooLarge, int64(len(s))/4*3, maxBytes)
	}
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, s)
	enc := base64.StdEncoding
	if len(s)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	if strings.ContainsAny(s, "-_") {
		enc = base64.URLEncoding
		if len(s)%4 != 0 {
			enc = base64.RawURLEncoding
		}
	}
	data, err := enc.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not valid base64: %v", err)
	}
	return data, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
