package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"perch/engine"
)

func init() {
	Register("chat", "chat in the terminal: one line a turn (/image, /audio, /video PATH attach; /reset)", func(args []string) int {
		return runChat(args, os.Stdin, os.Stdout, os.Stderr)
	})
}

// runChat keeps a conversation going over stdin lines, so follow-ups reuse
// the model's cached prefix and tower outputs, as in the app.
func runChat(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f, first, err := parseGenFlags("chat", args, stderr)
	if err != nil {
		if err == flagErrHelp {
			return 0
		}
		fmt.Fprintln(stderr, "perch chat:", err)
		return 2
	}
	out := &askOutput{w: stdout, json: f.jsonOut, verb: "chat"}
	e, err := openCLIEngine(f, stderr)
	if err != nil {
		return out.fail(stderr, err)
	}
	defer e.Close()
	var history []engine.Message
	if f.system != "" {
		history = append(history, engine.Text(engine.RoleSystem, f.system))
	}
	pending, err := attachments(f.media)
	if err != nil {
		return out.fail(stderr, err)
	}
	lines := bufio.NewScanner(stdin)
	lines.Buffer(make([]byte, 64<<10), 1<<20)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	for {
		text := first
		first = ""
		if text == "" {
			if !f.jsonOut {
				fmt.Fprint(stderr, "> ")
			}
			if !lines.Scan() {
				return 0
			}
			text = strings.TrimSpace(lines.Text())
		}
		switch cmd, arg, _ := strings.Cut(text, " "); cmd {
		case "":
			continue
		case "/quit", "/exit":
			return 0
		case "/reset":
			history, pending = history[:0], nil
			continue
		case "/image", "/audio", "/video":
			data, err := os.ReadFile(strings.TrimSpace(arg))
			if err != nil {
				fmt.Fprintln(stderr, "perch chat:", err)
				continue
			}
			pending = append(pending, engine.Part{Type: engine.PartType(cmd[1:]), Data: data, Name: arg})
			continue
		}
		user := engine.Message{Role: engine.RoleUser, Content: append(pending, engine.Part{Type: engine.PartText, Text: text})}
		pending = nil
		req := f.settings()
		req.Messages = append(append([]engine.Message(nil), history...), user)
		answer, thinking, err := streamTurn(ctx, e, req, out)
		if err != nil {
			out.fail(stderr, err)
			continue
		}
		history = append(history, user, engine.Message{Role: engine.RoleAssistant, Thinking: thinking,
			Content: []engine.Part{{Type: engine.PartText, Text: answer}}})
	}
}

// streamTurn prints one answer as it streams and returns its text.
func streamTurn(ctx context.Context, e *engine.Engine, req engine.Request, out *askOutput) (string, string, error) {
	events, err := e.Generate(ctx, req)
	if err != nil {
		return "", "", err
	}
	c := engine.Collect(events, out.event)
	return c.Text(), c.Thinking(), c.Err
}
