package look

import (
	"fmt"

	"perch/ui"
)

// How every page speaks of memory: one budget (what this computer can give
// a model, the same figure on Models and Teach) and one sentence.

// MemoryLine is "needs 5.1 GB of the 24.0 GB this computer can give", or
// "needs 5.1 GB of memory" while the budget is not known.
func MemoryLine(need, budget int64) string {
	if budget <= 0 {
		return "needs " + ui.ByteSize(need) + " of memory"
	}
	return fmt.Sprintf("needs %s of the %s %s can give", ui.ByteSize(need), ui.ByteSize(budget), PlatformText("this Mac", "this computer"))
}

// FitWords is what a fit adds to memoryLine ("" when it fits with room).
func FitWords(f ui.Fit) string {
	switch f {
	case ui.FitsTight:
		return "tight fit: close other apps"
	case ui.TooBig:
		return PlatformText("too big for this Mac", "too big for this computer")
	}
	return ""
}
