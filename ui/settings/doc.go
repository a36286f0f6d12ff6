// Package settings is the settings page: it loads ui.Settings from the
// ui.SettingsStore, shows the model's own defaults (ui.ModelDefaults) in
// place of unset values, and saves as the user changes a field, then asks
// the app to apply them (Env.ApplySettings).
package settings
