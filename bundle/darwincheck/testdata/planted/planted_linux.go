//go:build linux

package planted

// Not in the darwin build, so not reported.
var unused int = "linux only"
