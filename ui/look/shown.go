package look

import (
	"regexp"
	"strings"
)

// specialToken is a tag the markdown view hides: what CommonMark reads as
// an HTML tag, as a model's <unused12>, <mask> or <bos> are (<end_of_turn>
// and <turn|> are not, and show).
var specialToken = regexp.MustCompile(`</?[A-Za-z][A-Za-z0-9-]*\s*/?>`)

// ShownText is an answer's text as the chat shows it, for the boxes and
// previews that show plain text (the correction box, Teach's preview):
// tags the markdown view hides are left out, except in code, which shows
// them. Edit what is shown, not what was hidden.
func ShownText(text string) string {
	lines := strings.Split(text, "\n")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			lines[i] = outsideCode(l)
		}
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// outsideCode drops hidden tags from a line, except inside `code` spans.
func outsideCode(l string) string {
	parts := strings.Split(l, "`")
	for i := 0; i < len(parts); i += 2 { // even parts lie outside backticks
		parts[i] = specialToken.ReplaceAllString(parts[i], "")
	}
	return strings.Join(parts, "`")
}
