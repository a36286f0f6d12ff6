package mcptest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"perch/internal/npmtest"
	"runtime"
	"testing"
)

func here() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Servers are the real servers' command lines (node and the package's
// entry point), installed.
type Servers struct {
	Everything, Filesystem []string
}

// Install installs the servers pinned by package-lock.json here into the
// git-ignored testdata/cache/npm-mcp (see npmtest).
func Install(t testing.TB) Servers {
	t.Helper()
	cache := npmtest.Install(t, "real MCP servers", here(), "npm-mcp")
	node := npmtest.Node(t)
	entry := func(pkg string) []string {
		dir := filepath.Join(cache, "node_modules", "@modelcontextprotocol", pkg)
		data, err := os.ReadFile(filepath.Join(dir, "package.json"))
		var p struct {
			Bin map[string]string `json:"bin"`
		}
		if err != nil || json.Unmarshal(data, &p) != nil || len(p.Bin) == 0 {
			t.Fatalf("%s: no bin entry in its package.json (%v)", pkg, err)
		}
		for _, b := range p.Bin {
			return []string{node, filepath.Join(dir, b)}
		}
		return nil
	}
	return Servers{Everything: entry("server-everything"), Filesystem: entry("server-filesystem")}
}

// Logged is a real server's command line with calllog.cjs preloaded, and
// the variable that makes it log the methods it receives to log.
func Logged(server []string, log string) ([]string, map[string]string) {
	argv := append([]string{server[0], "--require", filepath.Join(here(), "calllog.cjs")}, server[1:]...)
	return argv, map[string]string{"PERCH_MCPTEST_LOG": log}
}
