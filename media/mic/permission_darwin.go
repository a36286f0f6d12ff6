//go:build darwin

package mic

import (
	"time"

	"github.com/progrium/darwinkit/macos/avfoundation"
)

// checkPermission asks macOS for microphone access (the first time it shows
// the system prompt, whose text is NSMicrophoneUsageDescription).
func checkPermission() error {
	cls := avfoundation.CaptureDeviceClass
	switch cls.AuthorizationStatusForMediaType(avfoundation.MediaTypeAudio) {
	case avfoundation.AuthorizationStatusAuthorized:
		return nil
	case avfoundation.AuthorizationStatusDenied, avfoundation.AuthorizationStatusRestricted:
		return ErrDenied
	}
	granted := make(chan bool, 1)
	cls.RequestAccessForMediaTypeCompletionHandler(avfoundation.MediaTypeAudio, func(ok bool) { granted <- ok })
	select {
	case ok := <-granted:
		if !ok {
			return ErrDenied
		}
		return nil
	case <-time.After(5 * time.Minute):
		return ErrDenied
	}
}
