// Package clientstest runs real OpenAI-compatible clients from npm (the
// OpenAI JS SDK, the Vercel AI SDK, the OpenAI Agents SDK; versions pinned
// by package-lock.json here) against a Perch server, for tests. The
// packages are installed with npm ci into the git-ignored
// testdata/cache/npm at the repository root, once per lock file. Without
// node or npm, or offline, a test skips in one line (and fails when
// PERCH_REQUIRE_REAL_VOCAB=1, as in CI).
package clientstest

import (
	"bytes"
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

// here is this package's folder (package.json, package-lock.json, clients.mjs).
func here() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

func unavailable(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("PERCH_REQUIRE_REAL_VOCAB") == "1" {
		t.Fatalf("real clients from npm: %s (PERCH_REQUIRE_REAL_VOCAB=1 requires them)", why)
	}
	t.Skipf("real clients from npm did not run: %s", why)
}

// Install makes sure the pinned clients are installed and returns the
// folder holding node_modules.
func Install(t testing.TB) string {
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
	cache := filepath.Join(here(), "..", "..", "..", "testdata", "cache", "npm")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	// go test runs packages in parallel; one installs at a time.
	lf, err := os.OpenFile(filepath.Join(cache, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	defer syscall.Flock(int(lf.Fd()), syscall.LOCK_UN)
	if have, _ := os.ReadFile(filepath.Join(cache, "installed")); string(have) == stamp {
		return cache
	}
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
	return cache
}

// Result is one scenario's outcome.
type Result struct {
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

// Call is a tool call's arguments as a client's function received them,
// checked against the tool's schema by ajv.
type Call struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Valid     bool            `json:"valid"`
	Errors    string          `json:"errors"`
}

// Output is what clients.mjs prints.
type Output struct {
	Results []Result `json:"results"`
	Calls   []Call   `json:"calls"`
}

// Run runs clients.mjs against the server at base: mode "all" or
// "constrained", each scenario rounds times.
func Run(t testing.TB, cache, base, model, mode string, rounds int) Output {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(here(), "clients.mjs"), base, model, mode, strconv.Itoa(rounds))
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(cache, "node_modules"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// ES modules resolve packages from the script's folder upwards, not
	// NODE_PATH: run a copy placed beside node_modules.
	script, err := os.ReadFile(filepath.Join(here(), "clients.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(cache, "clients.mjs")
	if err := os.WriteFile(copyPath, script, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd.Args[1] = copyPath
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node clients.mjs: %v\n%s\n%s", err, out, stderr.String())
	}
	var o Output
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("clients.mjs printed %q: %v\n%s", out, err, stderr.String())
	}
	return o
}
