//go:build !darwin

package mic

// checkPermission: Linux has no per-app microphone permission; a missing or
// muted device shows up as ErrNoDevice or ErrNoInput.
func checkPermission() error { return nil }
