package chat

import "strings"

// segment is a run of an answer: prose (Markdown that RichText renders) or a
// fenced code block (shown monospace with its own copy button, since Fyne's
// RichText is not selectable).
type segment struct {
	code bool
	lang string // fence info word, for code
	text string
}

// splitMarkdown cuts s into prose and fenced code blocks (``` or ~~~, up to
// three spaces of indent, CommonMark closing rules). A fence still open at
// the end, as while tokens stream in, runs to the end of s.
func splitMarkdown(s string) []segment {
	var out []segment
	var prose, code strings.Builder
	var fence string // the opening fence while inside a block
	var lang string
	flushProse := func() {
		if t := strings.Trim(prose.String(), "\n"); strings.TrimSpace(t) != "" {
			out = append(out, segment{text: t})
		}
		prose.Reset()
	}
	lines := strings.SplitAfter(s, "\n")
	for _, line := range lines {
		bare := strings.TrimRight(line, "\r\n")
		if fence == "" {
			if f, info, ok := openFence(bare); ok {
				flushProse()
				fence, lang = f, info
				continue
			}
			prose.WriteString(line)
			continue
		}
		if closesFence(bare, fence) {
			out = append(out, segment{code: true, lang: lang, text: strings.TrimSuffix(code.String(), "\n")})
			code.Reset()
			fence = ""
			continue
		}
		code.WriteString(line)
	}
	if fence != "" {
		out = append(out, segment{code: true, lang: lang, text: strings.TrimSuffix(code.String(), "\n")})
	}
	flushProse()
	return out
}

// openFence reports whether line opens a fenced code block, returning the
// fence run and the first word of its info string.
func openFence(line string) (fence, lang string, ok bool) {
	t, indent := trimIndent(line)
	if indent > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return "", "", false
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 {
		return "", "", false
	}
	info := strings.TrimSpace(t[n:])
	if t[0] == '`' && strings.Contains(info, "`") {
		return "", "", false // CommonMark: backtick fences' info has no backticks
	}
	if f := strings.Fields(info); len(f) > 0 {
		lang = f[0]
	}
	return t[:n], lang, true
}

// closesFence reports whether line closes a block opened with fence.
func closesFence(line, fence string) bool {
	t, indent := trimIndent(line)
	if indent > 3 || !strings.HasPrefix(t, fence) {
		return false
	}
	rest := strings.TrimLeft(t, fence[:1])
	return strings.TrimSpace(rest) == ""
}

func trimIndent(line string) (string, int) {
	n := 0
	for n < len(line) && line[n] == ' ' {
		n++
	}
	return line[n:], n
}
