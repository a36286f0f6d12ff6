// Package serve holds perch serve: Perch's OpenAI-compatible local API
// (package server) for one model, opened through package engines with the
// GUI's defaults, with its listening address, API key and adapter checked
// before the model loads. It registers into cli.Verbs from init.
package serve
