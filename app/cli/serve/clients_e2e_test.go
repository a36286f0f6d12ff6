package serve

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"perch/app/server/clientstest"
)

// TestRealClientsConstrainedOnTinyModel: `perch serve` on the tiny fixture
// model, whose weights are random, driven by the OpenAI JS SDK, the Vercel
// AI SDK and the OpenAI Agents SDK at temperature 1 with tool_choice
// required (and a response schema for generateObject). The grammar makes
// every call well-formed: each of at least 50 argument objects validates
// against the tool's schema (ajv, in the clients' own process).
func TestRealClientsConstrainedOnTinyModel(t *testing.T) {
	if _, err := os.Stat(filepath.Join(e2eModel, "config.json")); err != nil {
		t.Skipf("fixture model %s not present: %v", e2eModel, err)
	}
	cache := clientstest.Install(t)
	var logs bytes.Buffer
	f, err := parseServe([]string{"--addr", "127.0.0.1:0", "--model", e2eModel, "--backend", "go", "--quiet"}, &logs)
	if err != nil {
		t.Fatal(err)
	}
	s, err := startServe(f, &logs)
	if err != nil {
		t.Fatalf("start: %v\n%s", err, logs.String())
	}
	defer s.close()
	out := clientstest.Run(t, cache, "http://"+s.addr.String(), s.id, "constrained", 12)
	for _, r := range out.Results {
		if !r.OK {
			t.Errorf("%s: %s", r.Name, r.Error)
		}
	}
	if len(out.Results) != 72 {
		t.Errorf("%d scenario runs, want 6 scenarios x 12 rounds", len(out.Results))
	}
	valid := 0
	for _, c := range out.Calls {
		if c.Valid {
			valid++
		} else {
			t.Errorf("%s: arguments %s do not validate: %s", c.Name, c.Arguments, c.Errors)
		}
	}
	if valid < 50 {
		t.Fatalf("%d valid tool calls, want at least 50", valid)
	}
	t.Logf("%d tool calls from the random tiny model, all %d valid against their schema (ajv); e.g. %s", len(out.Calls), valid, out.Calls[0].Arguments)
}
