package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

func needGo(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool not on PATH: skipping")
	}
}

// The planted package has three darwin-only type errors (and one in a
// linux-only file that must not be reported).
func TestCatchesPlantedErrors(t *testing.T) {
	needGo(t)
	var out bytes.Buffer
	targets, errs, err := check(&out, []string{"perch/bundle/darwincheck/testdata/planted"})
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	t.Log(got)
	if targets != 1 || errs != 3 {
		t.Fatalf("%d packages, %d errors; want 1 and 3", targets, errs)
	}
	for _, want := range []string{"planted_darwin.go:13", "TracksWithMediaTypee", "planted_darwin.go:14", "planted_darwin.go:19"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q", want)
		}
	}
	if strings.Contains(got, "linux only") {
		t.Error("reported an error from a linux-only file")
	}
}

// darwinkit's own packages type-check cleanly, cgo and all.
func TestDarwinkitIsClean(t *testing.T) {
	needGo(t)
	var out bytes.Buffer
	targets, errs, err := check(&out, []string{"github.com/progrium/darwinkit/macos/avfoundation", "github.com/progrium/darwinkit/macos/coreimage"})
	if err != nil {
		t.Fatal(err)
	}
	if errs != 0 || targets != 2 {
		t.Fatalf("%d packages, %d errors:\n%s", targets, errs, out.String())
	}
}
