// Package tools is MCP tools as the user sees them: the card of a tool
// call in an answer (approve, deny, the result folded), the chat header's
// per-conversation switch of servers (ui.ToolChats), and Settings → Tools,
// the user's servers (ui.ToolSettings). A card's answer goes back through
// the call's Ask; the pages call the ports off the UI goroutine.
package tools
