package ui

import "context"

// ToolCall is one tool call of an answer as the chat shows it: a card
// with the tool, its server and arguments, asking for approval while Ask
// is set, then the outcome folded.
type ToolCall struct {
	// Lead is what the model said before this round of calls (on the
	// round's first call; "" otherwise).
	Lead         string
	Name         string // the name the model used
	Server, Tool string // "" when it named no offered tool
	Arguments    string // JSON, as the model wrote it
	Content      string // the result, the error, or why nothing ran
	IsError      bool
	Denied       bool
	Done         bool // the outcome is in
	// Ask answers the card while it waits (nil: it does not wait). It may
	// be called from the UI goroutine and returns at once.
	Ask func(ToolAnswer)
}

// Waiting reports whether the call waits for the user.
func (c ToolCall) Waiting() bool { return c.Ask != nil && !c.Done }

// ToolServer is an MCP server a conversation may offer the model.
type ToolServer struct {
	Name  string
	On    bool   // this conversation offers its tools
	State string // "starting", "ready", "failed", "stopped", "disabled"
}

// ToolChats is what a chat service with MCP tools offers the chat window
// and quick-ask: which servers' tools a conversation gives the model.
// conversationID "" is the next new conversation.
type ToolChats interface {
	ToolServers(conversationID string) ([]ToolServer, error)
	SetToolServer(conversationID, server string, on bool) error
}

// ToolInfo is one tool a server offers.
type ToolInfo struct {
	Name, Description string
	// Unchecked, when set, says why the tool's argument schema cannot be
	// enforced while the model writes a call: the tool is offered without
	// that constraint (and left out where a call is required).
	Unchecked string
}

// ToolServerInfo is one server on Settings → Tools.
type ToolServerInfo struct {
	Name    string
	Setup   string // the command line, or the URL
	Enabled bool
	State   string // "stopped", "starting", "ready", "failed", "disabled"
	Err     string // why it failed
	Stderr  string // the tail of what the server wrote, behind Details
	Tools   []ToolInfo
	Always  []string // tools the user always allows
}

// ToolSettings is Settings → Tools: the user's MCP servers.
type ToolSettings interface {
	List() []ToolServerInfo
	// Add sets up a server: a command line with its environment, or a URL
	// on this machine.
	Add(name, command string, env map[string]string, url string) error
	SetEnabled(name string, on bool) error
	Remove(name string) error
	// Check starts the server now and lists its tools (it blocks: call it
	// off the UI goroutine).
	Check(ctx context.Context, name string) error
	// Revoke forgets "always allow" for a server's tool.
	Revoke(server, tool string) error
}

// ToolAnswer is the user's answer on a tool-call card.
type ToolAnswer int

const (
	ToolDeny ToolAnswer = iota
	ToolAllowOnce
	ToolAllowAlways
)
