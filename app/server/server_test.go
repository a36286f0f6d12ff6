package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"perch/engine"
	"perch/media/fetch"
)

var testModel = ModelInfo{ID: "mlx-community/gemma-4-e2b-it-4bit", Created: time.Unix(1700000000, 0), Vision: true, Audio: true, Video: true}

// newTestServer serves s over loopback; the engine's worker and the
// listener stop at cleanup.
func newTestServer(t testing.TB, f *fakeEngine, opts Options) (*Server, *httptest.Server) {
	opts.Engine = f
	if opts.Model.ID == "" {
		opts.Model = testModel
	}
	s := New(opts)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		ts.Close()
		f.close()
	})
	return s, ts
}

func post(t testing.TB, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readSSE splits an event stream strictly: every event is one "data: "
// line followed by a blank line, and nothing else is allowed.
func readSSE(t testing.TB, r io.Reader) []string {
	t.Helper()
	raw, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(raw, []byte("\n\n")) {
		t.Fatalf("stream does not end with a blank line: %q", raw)
	}
	var events []string
	for _, ev := range strings.Split(strings.TrimSuffix(string(raw), "\n\n"), "\n\n") {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("malformed SSE event %q", ev)
		}
		events = append(events, data)
	}
	return events
}

func TestStreamMatchesOpenAIFormat(t *testing.T) {
	f := newFakeEngine(8, "Hel", "lo", "", " \"wor", "ld\"\n<b>")
	_, ts := newTestServer(t, f, Options{})
	resp := post(t, ts.URL, `{"model":"x","stream":true,"stream_options":{"include_usage":true},
		"messages":[{"role":"user","content":"hi"}]}`)
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := readSSE(t, resp.Body)
	if events[len(events)-1] != "[DONE]" {
		t.Fatalf("last event %q, want [DONE]", events[len(events)-1])
	}
	type chunkJSON struct {
		ID                string          `json:"id"`
		Object            string          `json:"object"`
		Created           int64           `json:"created"`
		Model             string          `json:"model"`
		SystemFingerprint *string         `json:"system_fingerprint"`
		Usage             json.RawMessage `json:"usage"`
		Choices           []struct {
			Index        int               `json:"index"`
			Delta        map[string]string `json:"delta"`
			Logprobs     json.RawMessage   `json:"logprobs"`
			FinishReason *string           `json:"finish_reason"`
		} `json:"choices"`
	}
	var chunks []chunkJSON
	for _, e := range events[:len(events)-1] {
		var c chunkJSON
		dec := json.NewDecoder(strings.NewReader(e))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			t.Fatalf("chunk %s: %v", e, err)
		}
		if !strings.HasPrefix(c.ID, "chatcmpl-") || c.ID != chunks0(chunks, c).ID || c.Object != "chat.completion.chunk" ||
			c.Model != testModel.ID || c.Created == 0 {
			t.Fatalf("chunk envelope %s", e)
		}
		chunks = append(chunks, c)
	}
	// role chunk, 4 content chunks (the empty delta is skipped), finish, usage
	if len(chunks) != 7 {
		t.Fatalf("%d chunks: %v", len(chunks), events)
	}
	first := chunks[0].Choices[0]
	if first.Delta["role"] != "assistant" || first.Delta["content"] != "" || first.FinishReason != nil {
		t.Fatalf("first chunk %s", events[0])
	}
	var text strings.Builder
	for _, c := range chunks[1:5] {
		ch := c.Choices[0]
		if ch.FinishReason != nil || string(ch.Logprobs) != "null" || string(c.Usage) != "null" {
			t.Fatalf("content chunk fields: %+v", c)
		}
		text.WriteString(ch.Delta["content"])
	}
	if want := "Hello \"world\"\n<b>"; text.String() != want {
		t.Fatalf("streamed %q, want %q", text.String(), want)
	}
	fin := chunks[5]
	if len(fin.Choices) != 1 || fin.Choices[0].FinishReason == nil || *fin.Choices[0].FinishReason != "stop" ||
		len(fin.Choices[0].Delta) != 0 || string(fin.Usage) != "null" {
		t.Fatalf("finish chunk %s", events[5])
	}
	var u usage
	json.Unmarshal(chunks[6].Usage, &u)
	if len(chunks[6].Choices) != 0 || u != (usage{7, 5, 12}) {
		t.Fatalf("usage chunk %s", events[6])
	}
	t.Logf("stream:\n%s", strings.Join(events, "\n"))
}

func chunks0[T any](list []T, v T) T {
	if len(list) == 0 {
		return v
	}
	return list[0]
}

func TestStreamWithoutUsageHasNoUsageField(t *testing.T) {
	f := newFakeEngine(8, "a", "b")
	f.stop = engine.StopMaxTokens
	_, ts := newTestServer(t, f, Options{})
	resp := post(t, ts.URL, `{"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	events := readSSE(t, resp.Body)
	for _, e := range events {
		if strings.Contains(e, `"usage"`) {
			t.Fatalf("usage without include_usage: %s", e)
		}
	}
	if !strings.Contains(events[len(events)-2], `"finish_reason":"length"`) || events[len(events)-1] != "[DONE]" {
		t.Fatalf("ending %v", events[len(events)-2:])
	}
}

func TestNonStreaming(t *testing.T) {
	f := newFakeEngine(8, "Hi", " there")
	f.tokens = append([]engine.Token{{Text: "hmm", Thinking: true}}, f.tokens...)
	_, ts := newTestServer(t, f, Options{})
	resp := post(t, ts.URL, `{"messages":[{"role":"user","content":"hi"}]}`)
	defer resp.Body.Close()
	var r struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Model   string `json:"model"`
		Choices []struct {
			Index   int `json:"index"`
			Message struct {
				Role, Content    string
				ReasoningContent string `json:"reasoning_content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage usage `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d: %v", resp.StatusCode, err)
	}
	c := r.Choices[0]
	if r.Object != "chat.completion" || r.Model != testModel.ID || c.Message.Role != "assistant" || c.Message.Content != "Hi there" ||
		c.Message.ReasoningContent != "hmm" || c.FinishReason != "stop" || r.Usage != (usage{7, 2, 9}) {
		t.Fatalf("response %+v", r)
	}
}

func TestEngineErrorMidStream(t *testing.T) {
	f := newFakeEngine(8, "a", "b", "c")
	f.failAfter = 2
	_, ts := newTestServer(t, f, Options{})
	events := readSSE(t, post(t, ts.URL, `{"stream":true,"messages":[{"role":"user","content":"hi"}]}`).Body)
	if n := len(events); n < 2 || events[n-1] != "[DONE]" || !strings.Contains(events[n-2], `"error":{"message":"generation failed: fake engine failure"`) {
		t.Fatalf("events %v", events)
	}
}

func tinyPNG(t testing.TB) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.RGBA{255, 0, 0, 255})
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

func tinyWAV() []byte {
	var b bytes.Buffer
	pcm := make([]byte, 3200) // 0.1 s of 16 kHz mono PCM16 silence
	le := func(v uint32, n int) {
		for i := 0; i < n; i++ {
			b.WriteByte(byte(v >> (8 * i)))
		}
	}
	b.WriteString("RIFF")
	le(uint32(36+len(pcm)), 4)
	b.WriteString("WAVEfmt ")
	le(16, 4)
	le(1, 2)
	le(1, 2)
	le(16000, 4)
	le(32000, 4)
	le(2, 2)
	le(16, 2)
	b.WriteString("data")
	le(uint32(len(pcm)), 4)
	b.Write(pcm)
	return b.Bytes()
}

func TestRequestMapsToEngine(t *testing.T) {
	f := newFakeEngine(8, "ok")
	_, ts := newTestServer(t, f, Options{Fetcher: fetch.New(fetch.Options{})})
	pngData, wav := tinyPNG(t), tinyWAV()
	video := append([]byte("\x00\x00\x00\x08moov"), make([]byte, 64)...)
	b64 := base64.StdEncoding.EncodeToString
	body := `{"model":"m","temperature":0.3,"top_p":0.9,"top_k":40,"seed":42,"max_tokens":10,"max_completion_tokens":20,
		"stop":["END","\n\n"],"chat_template_kwargs":{"enable_thinking":true},
		"messages":[
		 {"role":"developer","content":"be brief"},
		 {"role":"user","content":[
		   {"type":"text","text":"what is this?"},
		   {"type":"image_url","image_url":{"url":"data:image/png;base64,` + b64(pngData) + `","detail":"high"}},
		   {"type":"input_audio","input_audio":{"data":"` + b64(wav) + `","format":"wav"}},
		   {"type":"audio_url","audio_url":{"url":"data:audio/wav;base64,` + b64(wav) + `"}},
		   {"type":"video_url","video_url":{"url":"data:video/quicktime;base64,` + b64(video) + `"}}]},
		 {"role":"assistant","content":null,"reasoning_content":"thought"},
		 {"role":"user","content":"and?"}]}`
	resp := post(t, ts.URL, body)
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, raw)
	}
	req := f.lastRequest()
	s := req.Sampling
	if *s.Temperature != 0.3 || *s.TopP != 0.9 || *s.TopK != 40 || *s.Seed != 42 || req.MaxTokens != 20 ||
		strings.Join(req.Stop, "|") != "END|\n\n" || !req.EnableThinking {
		t.Fatalf("sampling/options not mapped: %+v", req)
	}
	if len(req.Messages) != 4 || req.Messages[0].Role != engine.RoleSystem || req.Messages[2].Role != engine.RoleAssistant ||
		req.Messages[2].Thinking != "thought" || req.Messages[3].Content[0].Text != "and?" {
		t.Fatalf("messages %+v", req.Messages)
	}
	parts := req.Messages[1].Content
	want := []struct {
		typ  engine.PartType
		data []byte
	}{{engine.PartText, nil}, {engine.PartImage, pngData}, {engine.PartAudio, wav}, {engine.PartAudio, wav}, {engine.PartVideo, video}}
	if len(parts) != len(want) {
		t.Fatalf("%d parts", len(parts))
	}
	for i, w := range want {
		if parts[i].Type != w.typ || !bytes.Equal(parts[i].Data, w.data) {
			t.Fatalf("part %d: %s with %d bytes, want %s with %d", i, parts[i].Type, len(parts[i].Data), w.typ, len(w.data))
		}
	}
}

// apiErr decodes OpenAI's error shape strictly.
func apiErr(t testing.TB, resp *http.Response) apiErrorBody {
	t.Helper()
	defer resp.Body.Close()
	var e struct {
		Error apiErrorBody `json:"error"`
	}
	dec := json.NewDecoder(resp.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
		t.Fatalf("status %d: not an OpenAI error body: %v", resp.StatusCode, err)
	}
	if resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("error content type %q", resp.Header.Get("Content-Type"))
	}
	return e.Error
}

func TestBadRequestsGetOpenAIErrors(t *testing.T) {
	f := newFakeEngine(8, "x")
	_, ts := newTestServer(t, f, Options{MaxBodyBytes: 4096})
	cases := []struct {
		body   string
		status int
		param  string
	}{
		{`{`, 400, ""},
		{`{"messages":[]}`, 400, "messages"},
		{`{"messages":[{"role":"wizard","content":"x"}]}`, 400, "messages[0].role"},
		{`{"messages":[{"role":"user","content":[{"type":"file","file":{}}]}]}`, 400, "messages[0].content[0].type"},
		{`{"messages":[{"role":"user","content":"x"}],"temperature":3}`, 400, "temperature"},
		{`{"messages":[{"role":"user","content":"x"}],"n":2}`, 400, "n"},
		{`{"messages":[{"role":"user","content":"x"}],"max_tokens":0}`, 400, "max_tokens"},
		{`{"messages":[{"role":"user","content":"x"}],"stop":[1]}`, 400, "stop"},
		{`{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function"}]}`, 400, "tools[0]"},
		{`{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"!!!"}}]}]}`, 400, "messages[0].content[0].input_audio.data"},
		{`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"file:///etc/passwd"}}]}]}`, 400, "messages[0].content[0]"},
		{`{"messages":[{"role":"user","content":"` + strings.Repeat("a", 5000) + `"}]}`, 413, ""},
	}
	for _, c := range cases {
		resp := post(t, ts.URL, c.body)
		e := apiErr(t, resp)
		if resp.StatusCode != c.status || (c.param != "" && (e.Param == nil || *e.Param != c.param)) {
			t.Errorf("%.60s: status %d param %v (%s); want %d %q", c.body, resp.StatusCode, e.Param, e.Message, c.status, c.param)
		}
		if strings.Contains(e.Message, "/etc/passwd") && c.status == 400 && strings.Contains(c.body, "file://") {
			t.Logf("file URL refused: %s", e.Message)
		}
	}
	resp, _ := http.Get(ts.URL + "/v1/nothing")
	if e := apiErr(t, resp); resp.StatusCode != 404 || *e.Code != "unknown_url" {
		t.Fatalf("unknown route: %d %+v", resp.StatusCode, e)
	}
	if admitted, _, _, _ := f.snapshot(); len(admitted) != 0 {
		t.Fatalf("%d bad requests reached the engine", len(admitted))
	}
}

func TestModalityRefusedForModel(t *testing.T) {
	f := newFakeEngine(8, "x")
	_, ts := newTestServer(t, f, Options{Model: ModelInfo{ID: "text-only"}})
	resp := post(t, ts.URL, `{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"`+
		base64.StdEncoding.EncodeToString(tinyWAV())+`","format":"wav"}}]}]}`)
	if e := apiErr(t, resp); resp.StatusCode != 400 || !strings.Contains(e.Message, "does not accept audio") {
		t.Fatalf("%d %s", resp.StatusCode, e.Message)
	}
}

func TestModels(t *testing.T) {
	f := newFakeEngine(8, "x")
	s, ts := newTestServer(t, f, Options{})
	resp, _ := http.Get(ts.URL + "/v1/models")
	var list struct {
		Object string        `json:"object"`
		Data   []modelObject `json:"data"`
	}
	json.NewDecoder(resp.Body).Decode(&list)
	if list.Object != "list" || len(list.Data) != 1 || list.Data[0].ID != testModel.ID || list.Data[0].Object != "model" {
		t.Fatalf("models %+v", list)
	}
	if resp, _ := http.Get(ts.URL + "/v1/models/" + testModel.ID); resp.StatusCode != 200 {
		t.Fatalf("GET model: %d", resp.StatusCode)
	}
	if resp, _ := http.Get(ts.URL + "/v1/models/other"); resp.StatusCode != 404 {
		t.Fatalf("GET other: %d", resp.StatusCode)
	}
	s.SetModel(nil, ModelInfo{})
	resp, _ = http.Get(ts.URL + "/v1/models")
	json.NewDecoder(resp.Body).Decode(&list)
	if len(list.Data) != 0 {
		t.Fatal("unloaded model still listed")
	}
	if resp := post(t, ts.URL, `{"messages":[{"role":"user","content":"x"}]}`); resp.StatusCode != 503 {
		t.Fatalf("no model: %d", resp.StatusCode)
	}
}

func TestBusyAnswers429(t *testing.T) {
	f := newFakeEngine(1, "x")
	release := f.hold()
	defer release()
	_, ts := newTestServer(t, f, Options{RetryAfter: 2 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/chat/completions", strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"x"}]}`))
	first, err := http.DefaultClient.Do(req) // takes the only slot, held
	if err != nil {
		t.Fatal(err)
	}
	defer first.Body.Close()
	resp := post(t, ts.URL, `{"messages":[{"role":"user","content":"x"}]}`)
	e := apiErr(t, resp)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" || *e.Code != "rate_limit_exceeded" {
		t.Fatalf("%d Retry-After %q %+v", resp.StatusCode, resp.Header.Get("Retry-After"), e)
	}
}

func TestStreamFlushesEachToken(t *testing.T) {
	f := newFakeEngine(8, "a", "b", "c")
	f.stepDelay = 50 * time.Millisecond
	_, ts := newTestServer(t, f, Options{})
	resp := post(t, ts.URL, `{"stream":true,"messages":[{"role":"user","content":"x"}]}`)
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	// The role chunk and the first token arrive before the stream ends.
	for i := 0; i < 2; i++ {
		line, err := br.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "data: {") {
			t.Fatalf("line %q: %v", line, err)
		}
		br.ReadString('\n')
	}
}
