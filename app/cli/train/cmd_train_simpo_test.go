package train

import "testing"

// TestSimPOFromJSONL: perch train --method simpo on preference rows.
func TestSimPOFromJSONL(t *testing.T) {
	steps := methodRun(t, "simpo", prefRows)
	if _, ok := steps[0]["margin"].(float64); !ok {
		t.Errorf("a SimPO step line carries no margin: %v", steps[0])
	}
}
