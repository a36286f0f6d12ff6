package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
)

// Settings are the user's preferences.
type Settings struct {
	DefaultModel  string // catalog id or folder; "" until the first model is chosen
	SystemPrompt  string
	Temperature   float64
	TopP          float64
	TopK          int
	MaxTokens     int
	Thinking      bool
	ImageTokens   int // 70, 140, 280, 560 or 1120
	VideoFPS      float64
	MaxFrames     int
	Hotkey        string
	LaunchAtLogin bool
	ModelsDir     string // "" is the Hugging Face cache
	LocalAPI      bool
	LocalAPIPort  int
	// ContextPolicy is what happens when a conversation outgrows the
	// model's context: TrimOldest ("" too) or AskFirst.
	ContextPolicy string
}

// Context policies.
const (
	TrimOldest = "trim" // leave the oldest turns out (attachments first) and say so in the chat
	AskFirst   = "ask"  // stop and ask before leaving anything out
)

// ImageBudgets are the image token budgets Gemma-4 offers.
var ImageBudgets = []int{70, 140, 280, 560, 1120}

// DefaultSettings follow Gemma-4's recommended sampling.
func DefaultSettings() Settings {
	return Settings{
		Temperature: 1.0, TopP: 0.95, TopK: 64, MaxTokens: 4096,
		ImageTokens: 280, VideoFPS: 2, MaxFrames: 32, // the video defaults of Gemma-4's processor
		Hotkey: DefaultHotkey, LocalAPIPort: 11435, ContextPolicy: TrimOldest,
	}
}

// Validate says what is wrong with s, in words the settings view shows.
func (s Settings) Validate() error {
	var bad []string
	if s.Temperature < 0 || s.Temperature > 2 {
		bad = append(bad, "temperature must be between 0 and 2")
	}
	if s.TopP <= 0 || s.TopP > 1 {
		bad = append(bad, "top-p must be above 0 and at most 1")
	}
	if s.TopK < 0 || s.TopK > 1000 {
		bad = append(bad, "top-k must be between 0 (off) and 1000")
	}
	if s.MaxTokens < 16 || s.MaxTokens > 131072 {
		bad = append(bad, "max tokens must be between 16 and 131072")
	}
	okBudget := false
	for _, b := range ImageBudgets {
		okBudget = okBudget || b == s.ImageTokens
	}
	if !okBudget {
		bad = append(bad, "image budget must be 70, 140, 280, 560 or 1120 tokens")
	}
	if s.VideoFPS <= 0 || s.VideoFPS > 8 {
		bad = append(bad, "video frames per second must be above 0 and at most 8")
	}
	if s.MaxFrames < 1 || s.MaxFrames > 64 {
		bad = append(bad, "max video frames must be between 1 and 64")
	}
	if _, err := ParseHotkey(s.Hotkey); err != nil {
		bad = append(bad, err.Error())
	}
	if s.ContextPolicy != "" && s.ContextPolicy != TrimOldest && s.ContextPolicy != AskFirst {
		bad = append(bad, "long conversations must either leave the oldest messages out or ask first")
	}
	if s.LocalAPIPort < 1024 || s.LocalAPIPort > 65535 {
		bad = append(bad, "the local API port must be between 1024 and 65535")
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	return nil
}

// SettingsStore loads and saves Settings.
type SettingsStore interface {
	Load() Settings
	Save(Settings) error
}

// PrefsSettings keeps Settings in Fyne's preferences (saved to disk by the app).
type PrefsSettings struct{ P fyne.Preferences }

const prefix = "perch."

// Load returns the saved settings, with defaults for anything unset.
func (p PrefsSettings) Load() Settings {
	d := DefaultSettings()
	g := p.P
	return Settings{
		DefaultModel:  g.StringWithFallback(prefix+"defaultModel", d.DefaultModel),
		SystemPrompt:  g.StringWithFallback(prefix+"systemPrompt", d.SystemPrompt),
		Temperature:   g.FloatWithFallback(prefix+"temperature", d.Temperature),
		TopP:          g.FloatWithFallback(prefix+"topP", d.TopP),
		TopK:          g.IntWithFallback(prefix+"topK", d.TopK),
		MaxTokens:     g.IntWithFallback(prefix+"maxTokens", d.MaxTokens),
		Thinking:      g.BoolWithFallback(prefix+"thinking", d.Thinking),
		ImageTokens:   g.IntWithFallback(prefix+"imageTokens", d.ImageTokens),
		VideoFPS:      g.FloatWithFallback(prefix+"videoFPS", d.VideoFPS),
		MaxFrames:     g.IntWithFallback(prefix+"maxFrames", d.MaxFrames),
		Hotkey:        g.StringWithFallback(prefix+"hotkey", d.Hotkey),
		LaunchAtLogin: g.BoolWithFallback(prefix+"launchAtLogin", d.LaunchAtLogin),
		ModelsDir:     g.StringWithFallback(prefix+"modelsDir", d.ModelsDir),
		LocalAPI:      g.BoolWithFallback(prefix+"localAPI", d.LocalAPI),
		LocalAPIPort:  g.IntWithFallback(prefix+"localAPIPort", d.LocalAPIPort),
		ContextPolicy: g.StringWithFallback(prefix+"contextPolicy", d.ContextPolicy),
	}
}

// Save validates and stores s.
func (p PrefsSettings) Save(s Settings) error {
	if err := s.Validate(); err != nil {
		return err
	}
	g := p.P
	g.SetString(prefix+"defaultModel", s.DefaultModel)
	g.SetString(prefix+"systemPrompt", s.SystemPrompt)
	g.SetFloat(prefix+"temperature", s.Temperature)
	g.SetFloat(prefix+"topP", s.TopP)
	g.SetInt(prefix+"topK", s.TopK)
	g.SetInt(prefix+"maxTokens", s.MaxTokens)
	g.SetBool(prefix+"thinking", s.Thinking)
	g.SetInt(prefix+"imageTokens", s.ImageTokens)
	g.SetFloat(prefix+"videoFPS", s.VideoFPS)
	g.SetInt(prefix+"maxFrames", s.MaxFrames)
	g.SetString(prefix+"hotkey", s.Hotkey)
	g.SetBool(prefix+"launchAtLogin", s.LaunchAtLogin)
	g.SetString(prefix+"modelsDir", s.ModelsDir)
	g.SetBool(prefix+"localAPI", s.LocalAPI)
	g.SetInt(prefix+"localAPIPort", s.LocalAPIPort)
	g.SetString(prefix+"contextPolicy", s.ContextPolicy)
	return nil
}
