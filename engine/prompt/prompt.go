// Package prompt holds what a request says to the model: chat messages whose
// content parts are text or the raw bytes of a media file. The engine, the
// Gemma-4 processor and the training data all speak it; it depends on nothing.
package prompt

// Role of a chat message, as in OpenAI's chat API ("assistant" renders as
// the model's turn).
type Role string

const (
	System    Role = "system"
	User      Role = "user"
	Assistant Role = "assistant"
	Tool      Role = "tool"
)

// PartType says what a content part carries.
type PartType string

const (
	Text  PartType = "text"
	Image PartType = "image"
	Audio PartType = "audio"
	Video PartType = "video"
)

// Part is one piece of a message's content: text, or the raw bytes of a
// media file (the processor sniffs and preprocesses them).
type Part struct {
	Type PartType
	Text string
	Data []byte // media bytes for image/audio/video parts
	Name string // a name for error messages (file name or URL), optional
	// Hash is Data's SHA-256 in hex when the caller already holds it (the
	// app's attachments are stored by it); "" lets the processor hash.
	Hash string
}

// Message is one chat turn.
type Message struct {
	Role    Role
	Content []Part
	// Thinking is a prior assistant turn's reasoning; templates strip it.
	Thinking string
	// ToolCalls are the calls an assistant turn made.
	ToolCalls []ToolCall
	// ToolCallID and ToolName identify the call a Tool message answers.
	ToolCallID string
	ToolName   string
}

// ToolCall is one function call: Arguments is a JSON object.
type ToolCall struct {
	ID        string
	Name      string
	Arguments []byte
}

// TextMessage returns a message holding only text.
func TextMessage(role Role, s string) Message {
	return Message{Role: role, Content: []Part{{Type: Text, Text: s}}}
}
