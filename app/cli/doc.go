// Package cli holds Perch's command-line verb table (Verbs, Register,
// RegisterStreams, Usage) and the verbs that talk to a model one prompt or
// one line at a time: ask (with --mcp tools), chat, grammar, tools, media,
// models, gui and quick-ask, one cmd_*.go file each. Verb families with
// their own concerns live in subpackages that register into the same
// table from init: app/cli/train (train, train watch, train fuse) and
// app/cli/serve (the OpenAI-compatible local API). Package main imports
// them all and dispatches to Verbs. Verbs open engines through package
// engines (the same defaults as the GUI and the local API), start the GUI
// through package desktop, and print; they hold no state between runs.
package cli
