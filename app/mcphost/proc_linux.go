package mcphost

import (
	"os/exec"
	"runtime"
	"syscall"
)

// sysProcAttr puts a server in its own process group and has the kernel
// kill it when Perch dies (Pdeathsig; the signal follows the thread that
// started it, so startLocked starts it from a locked thread).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// startLocked starts cmd from a thread no other goroutine runs on while
// it starts; Go never ends its threads otherwise, so the parent thread
// lives as long as Perch.
func startLocked(cmd *exec.Cmd) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return cmd.Start()
}
