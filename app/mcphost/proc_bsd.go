//go:build unix && !linux

package mcphost

import (
	"os/exec"
	"syscall"
)

// sysProcAttr puts a server in its own process group. (macOS has no
// Pdeathsig: a server whose Perch was killed sees its stdin close, and the
// next start ends it through its pid file.)
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func startLocked(cmd *exec.Cmd) error { return cmd.Start() }
