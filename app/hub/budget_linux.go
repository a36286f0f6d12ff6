package hub

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// MachineBudget reads /proc/meminfo: on Linux the CPU backends may use what
// the kernel reports as available now.
func MachineBudget() (Budget, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return Budget{}, fmt.Errorf("read memory size: %w", err)
	}
	defer f.Close()
	vals := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		fields := strings.Fields(rest)
		if !ok || len(fields) == 0 {
			continue
		}
		if n, err := strconv.ParseInt(fields[0], 10, 64); err == nil {
			vals[name] = n << 10 // kB
		}
	}
	total, avail := vals["MemTotal"], vals["MemAvailable"]
	if total <= 0 {
		return Budget{}, fmt.Errorf("read memory size: no MemTotal in /proc/meminfo")
	}
	if avail <= 0 || avail > total {
		avail = total
	}
	return Budget{TotalRAM: total, Usable: avail,
		Source: fmt.Sprintf("memory available now, of %s RAM", FormatBytes(total))}, nil
}
