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
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"perch/internal/npmtest"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// here is this package's folder (package.json, package-lock.json, clients.mjs).
func here() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Install makes sure the pinned clients are installed and returns the
// folder holding node_modules.
func Install(t testing.TB) string {
	t.Helper()
	return npmtest.Install(t, "real clients", here(), "npm")
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
