package serve

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The fixture model and media the engine work copies into testdata/.
const (
	e2eModel = "../../../testdata/models/text-tiny"
	e2eImage = "../../../testdata/goldens/vision-tiny/image.png"
	e2eAudio = "../../../testdata/goldens/audio-tiny/audio.wav"
)

// TestServeTinyModelStreamsOpenAIFormat is the end-to-end acceptance:
// `perch serve` on the tiny fixture model, and curl streaming a text
// prompt, then a prompt with a data-URL image and an input_audio part.
// Every byte of each stream must follow OpenAI's chunk format, end with
// the usage chunk and "data: [DONE]".
func TestServeTinyModelStreamsOpenAIFormat(t *testing.T) {
	if _, err := os.Stat(filepath.Join(e2eModel, "config.json")); err != nil {
		t.Skipf("fixture model %s not present: %v", e2eModel, err)
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl not installed: it is the OpenAI-compatible client this test drives")
	}
	var logs bytes.Buffer
	f, err := parseServe([]string{"--addr", "127.0.0.1:0", "--model", e2eModel, "--backend", "go", "--quiet"}, &logs)
	if err != nil {
		t.Fatal(err)
	}
	s, err := startServe(f, &logs)
	if err != nil {
		t.Fatalf("start: %v\n%s", err, logs.String())
	}
	defer s.close()
	url := "http://" + s.addr.String() + "/v1/chat/completions"

	png, err := os.ReadFile(e2eImage)
	if err != nil {
		t.Fatal(err)
	}
	wav, err := os.ReadFile(e2eAudio)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString
	for _, c := range []struct{ name, content string }{
		{"text", `"Write a haiku about a perch."`},
		{"image+audio", `[{"type":"text","text":"Describe the picture and the sound."},
			{"type":"image_url","image_url":{"url":"data:image/png;base64,` + b64(png) + `"}},
			{"type":"input_audio","input_audio":{"data":"` + b64(wav) + `","format":"wav"}}]`},
	} {
		body := `{"model":"text-tiny","stream":true,"stream_options":{"include_usage":true},"max_tokens":6,"temperature":0,
			"messages":[{"role":"user","content":` + c.content + `}]}`
		bodyFile := filepath.Join(t.TempDir(), "body.json")
		os.WriteFile(bodyFile, []byte(body), 0o600)
		out, err := exec.Command(curl, "-sS", "-N", "--fail-with-body", "-H", "Content-Type: application/json",
			"--data-binary", "@"+bodyFile, url).Output()
		if err != nil {
			t.Fatalf("%s: curl: %v\n%s\n%s", c.name, err, out, logs.String())
		}
		checkOpenAIStream(t, c.name, s.id, out)
	}
}

// checkOpenAIStream validates a chat.completion.chunk stream byte by byte.
func checkOpenAIStream(t *testing.T, name, model string, raw []byte) {
	t.Helper()
	if !bytes.HasSuffix(raw, []byte("data: [DONE]\n\n")) {
		t.Fatalf("%s: stream does not end with data: [DONE]: %q", name, raw)
	}
	events := strings.Split(strings.TrimSuffix(string(raw), "\n\n"), "\n\n")
	var id, text string
	var usage map[string]int
	finish := ""
	for i, ev := range events[:len(events)-1] {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("%s: malformed event %q", name, ev)
		}
		var c struct {
			ID      string         `json:"id"`
			Object  string         `json:"object"`
			Model   string         `json:"model"`
			Usage   map[string]int `json:"usage"`
			Choices []struct {
				Delta        map[string]string `json:"delta"`
				FinishReason *string           `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("%s: event %d: %v: %s", name, i, err, data)
		}
		if id == "" {
			id = c.ID
		}
		if c.ID != id || c.Object != "chat.completion.chunk" || c.Model != model {
			t.Fatalf("%s: envelope %s", name, data)
		}
		switch {
		case i == 0:
			if c.Choices[0].Delta["role"] != "assistant" {
				t.Fatalf("%s: first chunk %s", name, data)
			}
		case len(c.Choices) == 0:
			usage = c.Usage
		case c.Choices[0].FinishReason != nil:
			finish = *c.Choices[0].FinishReason
		default:
			text += c.Choices[0].Delta["content"]
		}
	}
	if finish != "stop" && finish != "length" {
		t.Fatalf("%s: finish_reason %q", name, finish)
	}
	if usage["prompt_tokens"] <= 0 || usage["completion_tokens"] <= 0 || usage["total_tokens"] != usage["prompt_tokens"]+usage["completion_tokens"] {
		t.Fatalf("%s: usage %v", name, usage)
	}
	t.Logf("%s: %d events, finish %s, usage %v, text %q", name, len(events), finish, usage, text)
}
