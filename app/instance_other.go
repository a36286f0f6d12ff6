//go:build !unix

package main

import "errors"

// Elsewhere each launch is its own app (no single-instance socket).
type instance struct{}

var errRunning = errors.New("Perch is already running")

const (
	cmdShow     = "show"
	cmdQuickAsk = "quick-ask"
)

func claimInstance(string) (*instance, error) { return &instance{}, nil }
func (*instance) Serve(func(string))          {}
func (*instance) Close()                      {}
func askInstance(string, string) error {
	return errors.New("handing a command to a running Perch is not supported on this system")
}
