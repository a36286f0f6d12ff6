package mcptest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func here() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

func unavailable(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("PERCH_REQUIRE_REAL_VOCAB") == "1" {
		t.Fatalf("real MCP servers from npm: %s (PERCH_REQUIRE_REAL_VOCAB=1 requires them)", why)
	}
	t.Skipf("real MCP servers from npm did not run: %s", why)
}

// Servers are the real servers' command lines (node and the package's
// entry point), installed.
type Servers struct {
	Everything, Filesystem []string
}

// Install installs the servers pinned by package-lock.json here with
// npm ci into the git-ignored testdata/cache/npm-mcp at the repository
// root (once per lock file). Without node or npm, or offline, the test
// skips in one line, and fails under PERCH_REQUIRE_REAL_VOCAB=1.
func Install(t testing.TB) Servers {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable(t, "node is not installed")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		unavailable(t, "npm is not installed")
	}
	v, _ := exec.Command(node, "--version").Output()
	if major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(strings.TrimSpace(string(v)), "v"), ".", 2)[0]); major < 18 {
		unavailable(t, "node "+strings.TrimSpace(string(v))+" is older than 18")
	}
	lock, err := os.ReadFile(filepath.Join(here(), "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(lock)
	stamp := hex.EncodeToString(sum[:])
	cache := filepath.Join(here(), "..", "..", "..", "testdata", "cache", "npm-mcp")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	lf, err := os.OpenFile(filepath.Join(cache, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	defer syscall.Flock(int(lf.Fd()), syscall.LOCK_UN)
	if have, _ := os.ReadFile(filepath.Join(cache, "installed")); string(have) != stamp {
		for _, f := range []string{"package.json", "package-lock.json"} {
			data, err := os.ReadFile(filepath.Join(here(), f))
			if err == nil {
				err = os.WriteFile(filepath.Join(cache, f), data, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--prefer-offline")
		cmd.Dir = cache
		if out, err := cmd.CombinedOutput(); err != nil {
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			unavailable(t, "npm ci failed (offline?): "+lines[len(lines)-1])
		}
		if err := os.WriteFile(filepath.Join(cache, "installed"), []byte(stamp), 0o644); err != nil {
			t.Fatal(err)
		}
	}
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
