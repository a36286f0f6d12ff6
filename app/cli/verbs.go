package cli

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// Verb is one sub-command. The verbs of this package live in its cmd_*.go
// files; a family of verbs with its own concerns lives in a subpackage
// (app/cli/train). Each registers itself from init, and package main
// imports every package that holds verbs.
type Verb struct {
	Summary string
	Run     func(args []string) int
	// Streams, when set, is Run with its standard streams given: tests,
	// and verbs of other packages, run a verb and read what it printed.
	Streams func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// Verbs is every sub-command by name.
var Verbs = map[string]Verb{}

// Register adds a sub-command to Verbs.
func Register(name, summary string, run func(args []string) int) {
	Verbs[name] = Verb{Summary: summary, Run: run}
}

// RegisterStreams adds a sub-command that reads and writes the streams it
// is given (the process's own when run from the command line).
func RegisterStreams(name, summary string, run func(args []string, stdin io.Reader, stdout, stderr io.Writer) int) {
	Verbs[name] = Verb{Summary: summary, Streams: run,
		Run: func(args []string) int { return run(args, os.Stdin, os.Stdout, os.Stderr) }}
}

// Usage lists the sub-commands.
func Usage(w io.Writer) {
	fmt.Fprintln(w, "usage: perch [command] [flags]   (no command starts the app)")
	names := make([]string, 0, len(Verbs))
	for n := range Verbs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, Verbs[n].Summary)
	}
}
