package cli

import (
	"fmt"
	"io"
	"sort"
)

// Verb is one sub-command; each lives in its own cmd_*.go file and
// registers itself from init.
type Verb struct {
	Summary string
	Run     func(args []string) int
}

// Verbs is every sub-command by name.
var Verbs = map[string]Verb{}

// Register adds a sub-command to Verbs.
func Register(name, summary string, run func(args []string) int) {
	Verbs[name] = Verb{Summary: summary, Run: run}
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
