package cli

import "flag"

// ParseFlags parses flags that may come before or after positional words
// (perch models pull ID --quant 4, perch train watch DIR --json) and
// returns the words in order.
func ParseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return words, nil
		}
		words = append(words, args[0])
		args = args[1:]
	}
}
