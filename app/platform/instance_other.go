//go:build !unix

package platform

import "errors"

// Elsewhere each launch is its own app (no single-instance socket).
type Instance struct{}

var ErrRunning = errors.New("Perch is already running")

const (
	CmdShow     = "show"
	CmdQuickAsk = "quick-ask"
)

func ClaimInstance(string) (*Instance, error) { return &Instance{}, nil }
func (*Instance) Serve(func(string))          {}
func (*Instance) Close()                      {}
func AskInstance(string, string) error {
	return errors.New("handing a command to a running Perch is not supported on this system")
}
