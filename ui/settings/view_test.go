package settings

import (
	"reflect"
	"strings"
	"testing"

	"perch/engine/sample"
	"perch/ui"
	"perch/ui/internal/fake"
)

func TestSettingsPersistAndUnsetStaysUnset(t *testing.T) {
	h := fake.NewEnv(t)
	h.Budgets = []int{70, 140, 280, 560, 1120}
	h.Model.Set(ui.ModelState{ID: "e2b", Name: "Gemma-4 E2B", Loaded: true, Vision: true,
		Defaults: &ui.ModelDefaults{Sampling: sample.Params{Temperature: 1, TopP: 0.95, TopK: 64}, ImageTokens: 280, VideoFPS: 2, MaxFrames: 32, MaxTokens: 2048}})
	h.Loop.Drain()
	v := NewView(h.Env, h.Win)
	h.Show(v.Root)
	v.Load()
	g := v.Gen
	// Nothing set: empty fields showing the model's own values.
	if g.Temp.Text != "" || g.Temp.PlaceHolder != "Model default · 1" || g.topK.PlaceHolder != "Model default · 64" ||
		g.budget.SelectedIndex() != 0 || g.budget.Selected != "Model default · 280 tokens" || v.hotkey.Text != ui.DefaultHotkey {
		t.Fatalf("defaults shown: temp %q/%q top-k %q budget %q", g.Temp.Text, g.Temp.PlaceHolder, g.topK.PlaceHolder, g.budget.Selected)
	}
	g.Temp.SetText("0.4")
	v.system.SetText("Answer like a pirate.")
	v.Thinking.SetChecked(true)
	g.budget.SetSelected("1120 tokens")
	g.topK.SetText("40")
	v.hotkey.SetText("ctrl+shift+space")
	var applied []ui.Settings
	h.ApplySettings = func(old, new ui.Settings) error { applied = append(applied, old, new); return nil }
	v.save()
	if v.Status.Text != "Saved." {
		t.Fatalf("status = %q", v.Status.Text)
	}
	if len(applied) != 2 || applied[0].Hotkey != ui.DefaultHotkey || applied[1].Hotkey != "Ctrl+Shift+Space" {
		t.Fatalf("apply got %+v", applied)
	}
	// A fresh store over the same preferences reads what was saved, and
	// what was left alone is still unset.
	got := ui.PrefsSettings{P: h.App.Preferences()}.Load()
	want := ui.DefaultSettings()
	want.Sampling.Temperature, want.SystemPrompt, want.Thinking, want.ImageTokens, want.Sampling.TopK, want.Hotkey =
		ui.Ptr[float32](0.4), "Answer like a pirate.", true, ui.Ptr(1120), ui.Ptr(40), "Ctrl+Shift+Space"
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("loaded %+v\nwant   %+v", got, want)
	}
	if got.Sampling.TopP != nil || got.MaxTokens != nil || got.VideoFPS != nil || got.MaxFrames != nil {
		t.Fatal("settings never touched came back set")
	}
	// And a fresh view shows it.
	v2 := NewView(h.Env, h.Win)
	if v2.Gen.Temp.Text != "0.4" || !v2.Thinking.Checked || v2.hotkey.Text != "Ctrl+Shift+Space" || v2.Gen.topK.Text != "40" ||
		v2.Gen.topP.Text != "" || v2.Gen.budget.Selected != "1120 tokens" {
		t.Fatalf("reopened view: temp %q top-p %q hotkey %q", v2.Gen.Temp.Text, v2.Gen.topP.Text, v2.hotkey.Text)
	}
	// Bad input is refused with the reason, and nothing changes.
	v2.hotkey.SetText("Space")
	v2.Gen.MaxTokens.SetText("lots")
	v2.save()
	if !strings.HasPrefix(v2.Status.Text, "Not saved: max tokens must be a whole number") {
		t.Fatalf("status = %q", v2.Status.Text)
	}
	if !reflect.DeepEqual((ui.PrefsSettings{P: h.App.Preferences()}).Load(), want) {
		t.Fatal("invalid settings were saved")
	}
	// "Use the model's defaults" unsets them all again.
	v2.Load()
	v2.Gen.reset()
	v2.save()
	got = ui.PrefsSettings{P: h.App.Preferences()}.Load()
	if got.Sampling.Temperature != nil || got.Sampling.TopK != nil || got.ImageTokens != nil || got.SystemPrompt != "Answer like a pirate." {
		t.Fatalf("after reset: %+v", got)
	}
}
