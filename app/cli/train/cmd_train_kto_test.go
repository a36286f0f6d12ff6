package train

import (
	"fmt"
	"testing"
)

// ktoRows alternate a desirable and an undesirable completion: the thumbs
// up and down of Teach.
func ktoRows(n int) []any {
	var rows []any
	for i := 0; i < n; i++ {
		answer, label := "A robin sings.", true
		if i%2 == 1 {
			answer, label = "No idea, sorry.", false
		}
		rows = append(rows, map[string]any{"prompt": fmt.Sprintf("Question %d: which bird?", i), "completion": answer, "label": label})
	}
	return rows
}

// TestKTOFromJSONL: perch train --method kto on unpaired rows.
func TestKTOFromJSONL(t *testing.T) {
	steps := methodRun(t, "kto", ktoRows, "--beta", "0.5")
	if _, ok := steps[0]["kl"].(float64); !ok {
		t.Errorf("a KTO step line carries no kl: %v", steps[0])
	}
}
