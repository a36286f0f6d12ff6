//go:build !linux

package main

// trayHostPresent: macOS always has a menubar, Windows a notification area.
func trayHostPresent() bool { return true }
