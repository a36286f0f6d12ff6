package chat

import (
	"os"
	"testing"

	"perch/app/mcphost/mcptest"
)

// TestMain lets the test binary be the Go MCP test server when a tools
// test starts it as one.
func TestMain(m *testing.M) {
	mcptest.MaybeServe()
	os.Exit(m.Run())
}
