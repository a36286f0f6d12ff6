package ui

import (
	"testing"

	"fyne.io/fyne/v2/test"
)

// Preferences written by the first version (every value stored, the old
// hard-coded defaults among them) read as unset where they were defaults.
func TestOldPreferencesForgetHardCodedDefaults(t *testing.T) {
	a := test.NewTempApp(t)
	p := a.Preferences()
	p.SetString("perch.hotkey", "Option+Space")
	p.SetFloat("perch.temperature", 1)
	p.SetFloat("perch.topP", 0.95)
	p.SetInt("perch.topK", 40) // the user's own
	p.SetInt("perch.maxTokens", 4096)
	p.SetInt("perch.imageTokens", 280)
	s := PrefsSettings{P: p}.Load()
	if s.Sampling.Temperature != nil || s.Sampling.TopP != nil || s.MaxTokens != nil || s.ImageTokens != nil || s.Sampling.TopK == nil || *s.Sampling.TopK != 40 {
		t.Fatalf("upgraded settings = %+v", s)
	}
}
