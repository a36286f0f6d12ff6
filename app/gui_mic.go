package main

import "perch/ui"

// newRecorder returns the microphone recorder, or nil while this build has
// none (the mic button then says so).
func newRecorder() ui.Recorder { return nil }
