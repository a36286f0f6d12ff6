// Package chat is the conversation view, in the main window (View) and
// in the quick-ask popup (QuickAsk): the message list and its rows (text,
// Markdown code blocks, thinking, stats, versions, the context marker, the
// feedback buttons and correction box, tool cards from ui/tools), with the
// composer from ui/compose under it.
//
// Data flows in from the ui.Chat service: a send returns a ui.Reply whose
// Stream the view follows on the UI goroutine; ratings and corrections go
// out through ui.Feedback. It does not know the window around it: the
// window hands it callbacks (OnChange, OnNewChat).
package chat
