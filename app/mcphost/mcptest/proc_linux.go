package mcptest

import (
	"os"
	"strconv"
	"strings"
)

// Running reports whether process pid runs: a zombie waiting for its reaper
// does not count (the kill -9 tests wait for a server to be gone).
func Running(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}
