//go:build darwin

// Package planted holds deliberate type errors that only the darwin build sees.
package planted

import (
	"github.com/progrium/darwinkit/macos/avfoundation"
	"github.com/progrium/darwinkit/macos/foundation"
)

func frames(path string) int {
	asset := avfoundation.NewURLAssetWithURLOptions(foundation.NewURLFileURLWithPath(path), nil)
	asset.TracksWithMediaTypee(avfoundation.MediaTypeVideo) // planted: misspelled method
	var n int = asset.Duration().Value                      // planted: int64 to int
	return n
}

func label(n int) string {
	var s string = n // planted: int to string
	return s
}
