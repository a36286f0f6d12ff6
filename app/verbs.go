package main

import (
	"fmt"
	"os"
	"sort"
)

// verb is one sub-command; each lives in its own cmd_*.go file and
// registers itself from init.
type verb struct {
	summary string
	run     func(args []string) int
}

var verbs = map[string]verb{}

func register(name, summary string, run func(args []string) int) {
	verbs[name] = verb{summary: summary, run: run}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: perch [command] [flags]   (no command starts the app)")
	names := make([]string, 0, len(verbs))
	for n := range verbs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-8s %s\n", n, verbs[n].summary)
	}
}
