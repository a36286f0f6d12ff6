//go:build screenshots

package shots

import (
	"context"
	"fmt"
	"net"
	"net/http"

	"fyne.io/fyne/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"perch/app/mcphost/mcptest"
	"perch/engine"
	"perch/ui"
)

// toolsShots is the tools story, for make screenshot: two servers set up
// on Settings → Tools — the Go test server (echo, add, half) served over
// streamable HTTP on this machine from inside the app, and a command that
// exits at start with a reason on its stderr — (tools-settings.png); a
// new chat in which the model must call add, its card waiting for
// approval (tools-approve.png); allowed once, the result folded in the
// card and the answer after it (tools-result.png). It runs last: from
// here on every new chat offers the servers' tools.
func (g *gui) toolsShots(s scriptSteps) bool {
	mw := g.ui.Main
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.fail("tools: %v", err)
		return false
	}
	srv := mcptest.NewServer("", false)
	go http.Serve(ln, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	tools := g.Tools()
	if err := tools.Add("calculator", "", nil, fmt.Sprintf("http://%s/mcp", ln.Addr())); err != nil {
		s.fail("tools: add the calculator: %v", err)
		return false
	}
	if err := tools.Add("weather", `sh -c 'echo "weather-mcp: no API key: set WEATHER_API_KEY in the server environment" >&2; exit 3'`, nil, ""); err != nil {
		s.fail("tools: add the failing server: %v", err)
		return false
	}
	if err := tools.Check(context.Background(), "calculator"); err != nil {
		s.fail("tools: the in-app server did not start: %v", err)
		return false
	}
	if err := tools.Check(context.Background(), "weather"); err == nil {
		s.fail("tools: the failing server started")
		return false
	}
	// The window's own size (the story before may have made it small).
	fyne.DoAndWait(func() { mw.Window.Resize(fyne.NewSize(980, 680)); mw.ShowTools() })
	s.shoot(mw.Window, "tools-settings.png")

	// The tiny test model calls only when it must: the first round
	// requires a call of add (its arguments follow the tool's schema).
	g.Chat().ToolChoice = engine.ToolChoice{Mode: engine.ToolFunction, Name: "add"}
	defer func() { g.Chat().ToolChoice = engine.ToolChoice{} }()
	fyne.DoAndWait(func() {
		mw.ShowConversation("")
		mw.SetDraft("What is 1234 + 5678? Use the calculator.")
		mw.Submit()
	})
	var m ui.Message
	waiting := func() bool {
		m, _ = mw.LastMessage()
		return len(m.Tools) > 0 && m.Tools[len(m.Tools)-1].Waiting()
	}
	if !s.wait("the tool card", waiting) {
		return false
	}
	s.shoot(mw.Window, "tools-approve.png")
	if m.Tools[0].Server != "calculator" || m.Tools[0].Tool != "add" {
		s.fail("tools: the card is for %s on %s", m.Tools[0].Tool, m.Tools[0].Server)
		return false
	}
	// Allow once; later rounds (the model decides) are allowed too.
	for {
		fyne.DoAndWait(func() { m.Tools[len(m.Tools)-1].Ask(ui.ToolAllowOnce) })
		var busy bool
		if !s.wait("the tool's answer", func() bool { busy = mw.Busy(); return !busy || waiting() }) {
			return false
		}
		if !busy {
			break
		}
	}
	fyne.DoAndWait(func() { m, _ = mw.LastMessage() })
	if m.State != ui.Done || len(m.Tools) == 0 || !m.Tools[0].Done || m.Tools[0].IsError {
		s.fail("tools: the answer ended %s with calls %+v: %s", m.State, m.Tools, m.Err)
		return false
	}
	fmt.Printf("perch: tool call add%s = %q; answer %q\n", m.Tools[0].Arguments, m.Tools[0].Content, m.Text)
	s.shoot(mw.Window, "tools-result.png")
	return true
}
