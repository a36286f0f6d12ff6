package hub

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// MachineBudget estimates Metal's recommendedMaxWorkingSetSize from the
// RAM size (about 2/3 of RAM up to 36 GB, 3/4 above), the most MLX should
// plan to wire; the engine may replace it with the device's exact value.
func MachineBudget() (Budget, error) {
	total, err := unix.SysctlUint64("hw.memsize")
	if err != nil || total == 0 {
		return Budget{}, fmt.Errorf("read memory size (hw.memsize): %v", err)
	}
	usable := total / 3 * 2
	if total > 36<<30 {
		usable = total / 4 * 3
	}
	return Budget{TotalRAM: int64(total), Usable: int64(usable),
		Source: fmt.Sprintf("Metal working set, of %s RAM", FormatBytes(int64(total)))}, nil
}
