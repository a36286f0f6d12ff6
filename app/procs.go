package main

import (
	"os"
	"runtime"
	"strconv"
)

// Package main's init runs after every import's: undo those that set
// GOMAXPROCS (Fyne pulls in bild/parallel, whose init sets it to the CPU
// count, overriding the GOMAXPROCS variable and Go's container-aware
// default).
func init() { restoreGOMAXPROCS() }

// restoreGOMAXPROCS sets GOMAXPROCS from the environment variable when it
// holds a positive count, else back to Go's default (which then follows
// CPU quota changes again).
func restoreGOMAXPROCS() {
	if n, err := strconv.Atoi(os.Getenv("GOMAXPROCS")); err == nil && n > 0 {
		runtime.GOMAXPROCS(n)
		return
	}
	runtime.SetDefaultGOMAXPROCS()
}
