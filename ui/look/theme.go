package look

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// Colour names Perch adds to the theme.
const (
	ColorBubble  fyne.ThemeColorName = "perchBubble"  // user message background
	ColorCode    fyne.ThemeColorName = "perchCode"    // code block background
	ColorSidebar fyne.ThemeColorName = "perchSidebar" // conversation list background
	ColorCard    fyne.ThemeColorName = "perchCard"    // models view cards, chips
	ColorMeter   fyne.ThemeColorName = "perchMeter"   // mic level
)

// Theme is Perch's look: the default Fyne theme with a calm blue accent,
// softer surfaces and slightly roomier spacing.
type Theme struct{ fyne.Theme }

// NewTheme returns Perch's theme.
func NewTheme() fyne.Theme { return &Theme{theme.DefaultTheme()} }

func rgb(hex uint32) color.NRGBA {
	return color.NRGBA{R: uint8(hex >> 16), G: uint8(hex >> 8), B: uint8(hex), A: 0xff}
}

var palette = map[fyne.ThemeVariant]map[fyne.ThemeColorName]color.Color{
	theme.VariantLight: {
		theme.ColorNamePrimary:          rgb(0x4f6bed),
		theme.ColorNameFocus:            color.NRGBA{0x4f, 0x6b, 0xed, 0x66},
		theme.ColorNameSelection:        color.NRGBA{0x4f, 0x6b, 0xed, 0x33},
		theme.ColorNameHyperlink:        rgb(0x3a55d8),
		theme.ColorNameBackground:       rgb(0xfbfbfc),
		theme.ColorNameInputBackground:  rgb(0xf1f2f5),
		theme.ColorNameHeaderBackground: rgb(0xf4f5f8),
		theme.ColorNameButton:           rgb(0xeceef3),
		theme.ColorNameSeparator:        rgb(0xe4e6ec),
		theme.ColorNameForeground:       rgb(0x1f2330),
		theme.ColorNamePlaceHolder:      rgb(0x8a90a0),
		theme.ColorNameDisabled:         rgb(0x7d8393), // muted text (low-importance labels) must stay readable
		theme.ColorNameSuccess:          rgb(0x2e9e6a),
		theme.ColorNameWarning:          rgb(0xd98a1c),
		theme.ColorNameError:            rgb(0xd64545),
		ColorBubble:                     rgb(0xe9edfd),
		ColorCode:                       rgb(0xf2f3f6),
		ColorSidebar:                    rgb(0xf3f4f7),
		ColorCard:                       rgb(0xffffff),
		ColorMeter:                      rgb(0x2e9e6a),
	},
	theme.VariantDark: {
		theme.ColorNamePrimary:          rgb(0x7b8ff5),
		theme.ColorNameFocus:            color.NRGBA{0x7b, 0x8f, 0xf5, 0x66},
		theme.ColorNameSelection:        color.NRGBA{0x7b, 0x8f, 0xf5, 0x44},
		theme.ColorNameHyperlink:        rgb(0x9aabff),
		theme.ColorNameBackground:       rgb(0x1c1d22),
		theme.ColorNameInputBackground:  rgb(0x26282f),
		theme.ColorNameHeaderBackground: rgb(0x222329),
		theme.ColorNameButton:           rgb(0x2c2e36),
		theme.ColorNameSeparator:        rgb(0x30323a),
		theme.ColorNameForeground:       rgb(0xe6e7eb),
		theme.ColorNamePlaceHolder:      rgb(0x8c90a0),
		theme.ColorNameDisabled:         rgb(0x8c90a0),
		theme.ColorNameSuccess:          rgb(0x46c08a),
		theme.ColorNameWarning:          rgb(0xf0a53a),
		theme.ColorNameError:            rgb(0xf06a6a),
		ColorBubble:                     rgb(0x2b3050),
		ColorCode:                       rgb(0x16171b),
		ColorSidebar:                    rgb(0x202126),
		ColorCard:                       rgb(0x24262d),
		ColorMeter:                      rgb(0x46c08a),
	},
}

// Color implements fyne.Theme.
func (t *Theme) Color(n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	if v != theme.VariantDark {
		v = theme.VariantLight
	}
	if c, ok := palette[v][n]; ok {
		return c
	}
	return t.Theme.Color(n, v)
}

// Size implements fyne.Theme.
func (t *Theme) Size(n fyne.ThemeSizeName) float32 {
	switch n {
	case theme.SizeNameText:
		return 14
	case theme.SizeNameCaptionText:
		return 11.5
	case theme.SizeNameHeadingText:
		return 22
	case theme.SizeNameSubHeadingText:
		return 17
	case theme.SizeNamePadding:
		return 5
	case theme.SizeNameInnerPadding:
		return 9
	case theme.SizeNameInputRadius, theme.SizeNameSelectionRadius:
		return 7
	case theme.SizeNameScrollBarSmall:
		return 4
	}
	return t.Theme.Size(n)
}

// ThemeColor looks a colour up in the running app's theme.
func ThemeColor(n fyne.ThemeColorName) color.Color {
	return fyne.CurrentApp().Settings().Theme().Color(n, fyne.CurrentApp().Settings().ThemeVariant())
}
