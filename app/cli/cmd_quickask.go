package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"perch/app/desktop"
	"perch/app/platform"
)

func init() {
	Register("quick-ask", "open the quick-ask popup of the running Perch (starting it if none runs)", runQuickAsk)
}

// runQuickAsk is what a desktop shortcut runs: it hands "quick-ask" to the
// Perch that holds the data folder, or starts one with the popup open.
func runQuickAsk(args []string) int {
	fs := flag.NewFlagSet("quick-ask", flag.ContinueOnError)
	dir := fs.String("data-dir", os.Getenv("PERCH_DATA_DIR"), "the data folder of the Perch to ask (default: the OS's app-data folder)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "perch: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *dir == "" {
		*dir = desktop.DefaultDataDir()
	}
	in, err := platform.ClaimInstance(*dir)
	switch {
	case errors.Is(err, platform.ErrRunning):
		if err := platform.AskInstance(*dir, platform.CmdQuickAsk); err != nil {
			fmt.Fprintf(os.Stderr, "perch: %v\n", err)
			return 1
		}
		return 0
	case err != nil:
		fmt.Fprintf(os.Stderr, "perch: %v\n", err)
		return 1
	}
	in.Close() // none runs: start one, popup first
	return desktop.Start(desktop.Flags{DataDir: *dir, Hidden: true, QuickAsk: true})
}
