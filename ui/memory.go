package ui

import "fmt"

// How every page speaks of memory: one budget (what this computer can give
// a model, the same figure on Models and Teach) and one sentence.

// memoryLine is "needs 5.1 GB of the 24.0 GB this computer can give", or
// "needs 5.1 GB of memory" while the budget is not known.
func memoryLine(need, budget int64) string {
	if budget <= 0 {
		return "needs " + ByteSize(need) + " of memory"
	}
	return fmt.Sprintf("needs %s of the %s %s can give", ByteSize(need), ByteSize(budget), platformText("this Mac", "this computer"))
}

// fitWords is what a fit adds to memoryLine ("" when it fits with room).
func fitWords(f Fit) string {
	switch f {
	case FitsTight:
		return "tight fit: close other apps"
	case TooBig:
		return platformText("too big for this Mac", "too big for this computer")
	}
	return ""
}
