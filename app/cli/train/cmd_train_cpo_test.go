package train

import "testing"

// TestCPOFromJSONL: perch train --method cpo on preference rows.
func TestCPOFromJSONL(t *testing.T) {
	steps := methodRun(t, "cpo", prefRows)
	if _, ok := steps[0]["nll"].(float64); !ok {
		t.Errorf("a CPO step line carries no nll: %v", steps[0])
	}
}
