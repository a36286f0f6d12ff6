package look

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// Icons of the Teach page and the feedback buttons, drawn with fills only
// so the theme can recolour them.

func svgIcon(name, body string) fyne.Resource {
	return fyne.NewStaticResource(name, []byte(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">`+body+`</svg>`))
}

const (
	thumbUpSVG = `<rect x="2" y="10" width="4" height="11" rx="1" fill="#000000"/>` +
		`<path d="M8 10.5L12.2 3.2C13.8 3.2 15 4.6 14.6 6.3L13.9 9H19.6C21.1 9 22.2 10.4 21.8 11.9L19.9 19.6C19.6 20.5 18.8 21.1 17.9 21.1H8Z" fill="#000000"/>`
	thumbDownSVG = `<rect x="18" y="3" width="4" height="11" rx="1" fill="#000000"/>` +
		`<path d="M16 13.5L11.8 20.8C10.2 20.8 9 19.4 9.4 17.7L10.1 15H4.4C2.9 15 1.8 13.6 2.2 12.1L4.1 4.4C4.4 3.5 5.2 2.9 6.1 2.9H16Z" fill="#000000"/>`
	teachSVG = `<path d="M12 3L1 9L12 15L21 10.1V17H23V9Z" fill="#000000"/>` +
		`<path d="M5 13.2V17C5 17 8 20 12 20C16 20 19 17 19 17V13.2L12 17Z" fill="#000000"/>`
)

var (
	ThumbUpIcon     fyne.Resource = theme.NewThemedResource(svgIcon("thumb-up.svg", thumbUpSVG))
	ThumbDownIcon   fyne.Resource = theme.NewThemedResource(svgIcon("thumb-down.svg", thumbDownSVG))
	ThumbUpChosen   fyne.Resource = theme.NewPrimaryThemedResource(svgIcon("thumb-up-on.svg", thumbUpSVG))
	ThumbDownChosen fyne.Resource = theme.NewErrorThemedResource(svgIcon("thumb-down-on.svg", thumbDownSVG))
	TeachIcon       fyne.Resource = theme.NewThemedResource(svgIcon("teach.svg", teachSVG))
)
