// Command perch is the Perch menubar app and its command-line verbs: it
// only dispatches to the verb table in package cli.
package main

import (
	"fmt"
	"os"

	"perch/app/cli"
	_ "perch/app/cli/serve" // perch serve registers itself
	_ "perch/app/cli/train" // the train verbs (train, train watch, train fuse) register themselves
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run dispatches to a verb; with no verb it starts the GUI.
func run(args []string) int {
	name := "gui"
	if len(args) > 0 {
		name, args = args[0], args[1:]
	}
	if name == "-h" || name == "--help" || name == "help" {
		cli.Usage(os.Stderr)
		return 0
	}
	v, ok := cli.Verbs[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "perch: unknown command %q (try 'perch help')\n", name)
		return 2
	}
	return v.Run(args)
}
