//go:build !linux

package platform

// TrayHostPresent: macOS always has a menubar, Windows a notification area.
func TrayHostPresent() bool { return true }
