package ui

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"fyne.io/fyne/v2"

	"perch/engine/sample"
)

// Settings are the user's preferences. The generation and media settings
// are pointers: nil is "unset", and the model's own default (its
// generation_config.json, its processor) applies; only a value the user
// chose is sent with a request.
type Settings struct {
	DefaultModel string // catalog id or folder; "" until the first model is chosen
	SystemPrompt string
	// Sampling is the engine's own sampling struct, the one form a
	// sampling setting takes from here to the sampler; the page edits
	// Temperature, TopP and TopK (the rest stay unset).
	Sampling      sample.Options
	MaxTokens     *int
	Thinking      bool
	ImageTokens   *int // one of the engine's image budgets (Deps.ImageBudgets)
	VideoFPS      *float64
	MaxFrames     *int
	Hotkey        string
	LaunchAtLogin bool
	ModelsDir     string // "" is the Hugging Face cache
	LocalAPI      bool
	LocalAPIPort  int
	// ContextPolicy is what happens when a conversation outgrows the
	// model's context: TrimOldest ("" too) or AskFirst.
	ContextPolicy string
	// ToolRounds is how many rounds of tool calls one answer may take (0:
	// DefaultToolRounds).
	ToolRounds int
}

// DefaultToolRounds is ToolRounds' default.
const DefaultToolRounds = 8

// Context policies.
const (
	TrimOldest = "trim" // leave the oldest turns out (attachments first) and say so in the chat
	AskFirst   = "ask"  // stop and ask before leaving anything out
)

// ModelDefaults are what the model does with a setting left unset (the
// settings page shows them).
type ModelDefaults struct {
	Sampling    sample.Params // Temperature, TopP and TopK as the engine reads them
	Greedy      bool
	ImageTokens int // 0: the model cannot see
	VideoFPS    float64
	MaxFrames   int
	MaxTokens   int
}

// DefaultSettings leave every model setting unset.
func DefaultSettings() Settings {
	return Settings{Hotkey: DefaultHotkey, LocalAPIPort: 11435, ContextPolicy: TrimOldest, ToolRounds: DefaultToolRounds}
}

// Validate says what is wrong with s, in words the settings view shows.
// budgets are the image budgets the engine takes (nil: not checked).
func (s Settings) Validate(budgets []int) error {
	var bad []string
	check := func(ok bool, msg string) {
		if !ok {
			bad = append(bad, msg)
		}
	}
	if v := s.Sampling.Temperature; v != nil {
		check(*v >= 0 && *v <= 2, "temperature must be between 0 and 2")
	}
	if v := s.Sampling.TopP; v != nil {
		check(*v > 0 && *v <= 1, "top-p must be above 0 and at most 1")
	}
	if v := s.Sampling.TopK; v != nil {
		check(*v >= 0 && *v <= 1000, "top-k must be between 0 (off) and 1000")
	}
	if v := s.MaxTokens; v != nil {
		check(*v >= 16 && *v <= 131072, "max tokens must be between 16 and 131072")
	}
	if v := s.ImageTokens; v != nil && budgets != nil {
		check(slices.Contains(budgets, *v), "image detail must be one of "+budgetList(budgets)+" tokens")
	}
	if v := s.VideoFPS; v != nil {
		check(*v > 0 && *v <= 8, "video frames per second must be above 0 and at most 8")
	}
	if v := s.MaxFrames; v != nil {
		check(*v >= 1 && *v <= 64, "max video frames must be between 1 and 64")
	}
	if _, err := ParseHotkey(s.Hotkey); err != nil {
		bad = append(bad, err.Error())
	}
	check(s.ContextPolicy == "" || s.ContextPolicy == TrimOldest || s.ContextPolicy == AskFirst,
		"long conversations must either leave the oldest messages out or ask first")
	check(s.ToolRounds >= 0 && s.ToolRounds <= 32, "rounds per answer must be between 1 and 32")
	check(s.LocalAPIPort >= 1024 && s.LocalAPIPort <= 65535, "the local API port must be between 1024 and 65535")
	if len(bad) > 0 {
		return fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	return nil
}

func budgetList(b []int) string {
	var s []string
	for _, n := range b {
		s = append(s, fmt.Sprint(n))
	}
	return strings.Join(s, ", ")
}

// SettingsStore loads and saves Settings.
type SettingsStore interface {
	Load() Settings
	Save(Settings) error
}

// PrefsSettings keeps Settings in Fyne's preferences (saved to disk by the
// app). An unset setting has no key.
type PrefsSettings struct {
	P       fyne.Preferences
	Budgets []int // image budgets Save accepts (nil: any)
}

const prefix = "perch."

// prefsVersion 2: unset settings have no key (version 1 wrote every value).
const prefsVersion = 2

// Load returns the saved settings.
func (p PrefsSettings) Load() Settings {
	p.upgrade()
	d := DefaultSettings()
	g := p.P
	return Settings{
		DefaultModel:  g.StringWithFallback(prefix+"defaultModel", d.DefaultModel),
		SystemPrompt:  g.StringWithFallback(prefix+"systemPrompt", d.SystemPrompt),
		Sampling:      sample.Options{Temperature: p.float32("temperature"), TopP: p.float32("topP"), TopK: p.int("topK")},
		MaxTokens:     p.int("maxTokens"),
		Thinking:      g.BoolWithFallback(prefix+"thinking", d.Thinking),
		ImageTokens:   p.int("imageTokens"),
		VideoFPS:      p.float("videoFPS"),
		MaxFrames:     p.int("maxFrames"),
		Hotkey:        g.StringWithFallback(prefix+"hotkey", d.Hotkey),
		LaunchAtLogin: g.BoolWithFallback(prefix+"launchAtLogin", d.LaunchAtLogin),
		ModelsDir:     g.StringWithFallback(prefix+"modelsDir", d.ModelsDir),
		LocalAPI:      g.BoolWithFallback(prefix+"localAPI", d.LocalAPI),
		LocalAPIPort:  g.IntWithFallback(prefix+"localAPIPort", d.LocalAPIPort),
		ContextPolicy: g.StringWithFallback(prefix+"contextPolicy", d.ContextPolicy),
		ToolRounds:    g.IntWithFallback(prefix+"toolRounds", d.ToolRounds),
	}
}

// Save validates and stores s.
func (p PrefsSettings) Save(s Settings) error {
	if err := s.Validate(p.Budgets); err != nil {
		return err
	}
	g := p.P
	g.SetInt(prefix+"prefsVersion", prefsVersion)
	g.SetString(prefix+"defaultModel", s.DefaultModel)
	g.SetString(prefix+"systemPrompt", s.SystemPrompt)
	p.setFloat32("temperature", s.Sampling.Temperature)
	p.setFloat32("topP", s.Sampling.TopP)
	p.setInt("topK", s.Sampling.TopK)
	p.setInt("maxTokens", s.MaxTokens)
	g.SetBool(prefix+"thinking", s.Thinking)
	p.setInt("imageTokens", s.ImageTokens)
	p.setFloat("videoFPS", s.VideoFPS)
	p.setInt("maxFrames", s.MaxFrames)
	g.SetString(prefix+"hotkey", s.Hotkey)
	g.SetBool(prefix+"launchAtLogin", s.LaunchAtLogin)
	g.SetString(prefix+"modelsDir", s.ModelsDir)
	g.SetBool(prefix+"localAPI", s.LocalAPI)
	g.SetInt(prefix+"localAPIPort", s.LocalAPIPort)
	g.SetString(prefix+"contextPolicy", s.ContextPolicy)
	g.SetInt(prefix+"toolRounds", s.ToolRounds)
	return nil
}

func (p PrefsSettings) float(key string) *float64 {
	if v := p.P.FloatWithFallback(prefix+key, math.NaN()); !math.IsNaN(v) {
		return &v
	}
	return nil
}

// float32 reads a sampling setting: Fyne keeps floats as float64, and a
// float32 written as one reads back exactly.
func (p PrefsSettings) float32(key string) *float32 {
	if v := p.float(key); v != nil {
		f := float32(*v)
		return &f
	}
	return nil
}

const noInt = math.MinInt32

func (p PrefsSettings) int(key string) *int {
	if v := p.P.IntWithFallback(prefix+key, noInt); v != noInt {
		return &v
	}
	return nil
}

func (p PrefsSettings) setFloat(key string, v *float64) {
	if v == nil {
		p.P.RemoveValue(prefix + key)
	} else {
		p.P.SetFloat(prefix+key, *v)
	}
}

func (p PrefsSettings) setFloat32(key string, v *float32) {
	if v == nil {
		p.P.RemoveValue(prefix + key)
	} else {
		p.P.SetFloat(prefix+key, float64(*v))
	}
}

func (p PrefsSettings) setInt(key string, v *int) {
	if v == nil {
		p.P.RemoveValue(prefix + key)
	} else {
		p.P.SetInt(prefix+key, *v)
	}
}

// upgrade forgets values that version 1 saved without the user choosing
// them: its hard-coded defaults (a user who picked exactly those gets the
// model's, which are the same for Gemma-4).
func (p PrefsSettings) upgrade() {
	g := p.P
	if g.IntWithFallback(prefix+"prefsVersion", 1) >= prefsVersion {
		return
	}
	if g.StringWithFallback(prefix+"hotkey", "") == "" {
		g.SetInt(prefix+"prefsVersion", prefsVersion) // nothing was ever saved
		return
	}
	old := map[string]float64{"temperature": 1, "topP": 0.95, "videoFPS": 2}
	for k, v := range old {
		if f := p.float(k); f != nil && math.Abs(*f-v) < 1e-9 {
			g.RemoveValue(prefix + k)
		}
	}
	oldInt := map[string]int{"topK": 64, "maxTokens": 4096, "imageTokens": 280, "maxFrames": 32}
	for k, v := range oldInt {
		if n := p.int(k); n != nil && *n == v {
			g.RemoveValue(prefix + k)
		}
	}
	g.SetInt(prefix+"prefsVersion", prefsVersion)
}

// Ptr returns a pointer to v (for setting a Settings value).
func Ptr[T any](v T) *T { return &v }
