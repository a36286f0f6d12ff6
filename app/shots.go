//go:build screenshots

package main

// The screenshot build (make screenshot) links the scripted-run harness.
import _ "perch/app/desktop/shots"
