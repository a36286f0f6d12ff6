package trainset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"perch/engine/chattemplate"
)

// MediaRef is a media part of a chat row: a file inside the dataset
// folder, named relative to it.
type MediaRef struct {
	Kind string // image, audio or video
	Path string
	Hash string // the bytes' SHA-256 in hex when the row's maker holds it ("": the processor hashes)
}

// jsonMessage is one OpenAI-style chat message of a dataset row.
type jsonMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []jsonToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
	// The assistant's reasoning, under any of the names tools write it.
	ReasoningContent string `json:"reasoning_content"`
	Reasoning        string `json:"reasoning"`
	Thinking         string `json:"thinking"`
}

type jsonToolCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// jsonPart is one item of list content: text, or a media file under the
// key of its type ({"type": "image", "image": "cat.jpg"}), "path" or
// OpenAI's {"type": "image_url", "image_url": {"url": …}}.
type jsonPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Image    string `json:"image"`
	Audio    string `json:"audio"`
	Video    string `json:"video"`
	Path     string `json:"path"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

var roles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true}

// parseMessages reads a message list (raw JSON) into template messages and
// the media files they refer to, in document order.
func parseMessages(raw json.RawMessage, what string) ([]chattemplate.Message, []MediaRef, error) {
	var msgs []jsonMessage
	if err := strictUnmarshal(raw, &msgs); err != nil {
		return nil, nil, fmt.Errorf("%q must be a list of messages ({\"role\", \"content\"}): %v", what, err)
	}
	if len(msgs) == 0 {
		return nil, nil, fmt.Errorf("%q is an empty list", what)
	}
	out := make([]chattemplate.Message, 0, len(msgs))
	var media []MediaRef
	for i, m := range msgs {
		tm, refs, err := m.template()
		if err != nil {
			return nil, nil, fmt.Errorf("%s message %d: %v", what, i+1, err)
		}
		out = append(out, tm)
		media = append(media, refs...)
	}
	return out, media, nil
}

func (m *jsonMessage) template() (chattemplate.Message, []MediaRef, error) {
	role := m.Role
	if role == "model" {
		role = "assistant"
	}
	if !roles[role] {
		return chattemplate.Message{}, nil, fmt.Errorf("role %q is not one of system, developer, user, assistant, tool", m.Role)
	}
	tm := chattemplate.Message{Role: role, ToolCallID: m.ToolCallID, Name: m.Name}
	for _, r := range []string{m.ReasoningContent, m.Reasoning, m.Thinking} {
		if r != "" {
			tm.Reasoning = r
			break
		}
	}
	var refs []MediaRef
	raw := bytes.TrimSpace(m.Content)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		if len(m.ToolCalls) == 0 {
			return tm, nil, errors.New("no content")
		}
		tm.NullContent = true
	case raw[0] == '"':
		if err := json.Unmarshal(raw, &tm.Content); err != nil {
			return tm, nil, fmt.Errorf("content: %v", err)
		}
	case raw[0] == '[':
		var parts []jsonPart
		if err := json.Unmarshal(raw, &parts); err != nil {
			return tm, nil, fmt.Errorf("content parts: %v", err)
		}
		tm.Parts = []chattemplate.Part{}
		for j, p := range parts {
			part, ref, err := p.template()
			if err != nil {
				return tm, nil, fmt.Errorf("content part %d: %v", j+1, err)
			}
			tm.Parts = append(tm.Parts, part)
			if ref != nil {
				refs = append(refs, *ref)
			}
		}
	default:
		return tm, nil, errors.New("content must be a string or a list of parts")
	}
	for _, c := range m.ToolCalls {
		if c.Function.Name == "" {
			return tm, nil, errors.New("a tool call has no function name")
		}
		tm.ToolCalls = append(tm.ToolCalls, chattemplate.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
	}
	return tm, refs, nil
}

func (p *jsonPart) template() (chattemplate.Part, *MediaRef, error) {
	path := p.Path
	kind := p.Type
	switch p.Type {
	case "text":
		return chattemplate.Part{Type: "text", Text: p.Text}, nil, nil
	case "image":
		path = first(p.Image, path)
	case "image_url":
		kind = "image"
		if p.ImageURL != nil {
			path = first(strings.TrimPrefix(p.ImageURL.URL, "file://"), path)
		}
	case "audio":
		path = first(p.Audio, path)
	case "video":
		path = first(p.Video, path)
	default:
		return chattemplate.Part{}, nil, fmt.Errorf("type %q is not text, image, audio or video", p.Type)
	}
	if path == "" {
		return chattemplate.Part{}, nil, fmt.Errorf("the %s part names no file (want {\"type\": %q, %q: \"file\"})", kind, kind, kind)
	}
	if strings.Contains(path, "://") || strings.HasPrefix(path, "data:") {
		return chattemplate.Part{}, nil, fmt.Errorf("%s %q: training media must be local files (a path relative to the dataset file)", kind, path)
	}
	return chattemplate.Part{Type: kind}, &MediaRef{Kind: kind, Path: path}, nil
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// strictUnmarshal is json.Unmarshal that also refuses trailing data.
func strictUnmarshal(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("unexpected data after the value")
	}
	return nil
}
