package server

import (
	"testing"

	"perch/engine"
)

// FuzzChatRequest: any body is either refused with a requestError or
// yields a request within the limits whose media references point at
// existing parts of the right kind.
func FuzzChatRequest(f *testing.F) {
	for _, s := range []string{
		`{"messages":[{"role":"user","content":"hi"}]}`,
		`{"stream":true,"stream_options":{"include_usage":true},"temperature":0,"top_p":1,"seed":-1,"stop":"x","max_tokens":5,
		  "messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"a"},
		  {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}},
		  {"type":"audio_url","audio_url":"http://example.com/a.wav"},{"type":"video_url","video_url":{"url":"https://example.com/v.mp4"}}]},
		  {"role":"assistant","content":null,"reasoning_content":"r"}]}`,
		`{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"data:audio/wav;base64,AAAA"}}]}]}`,
		`{"messages":[{"role":"assistant","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`,
		`{"messages":[{"role":"user","content":[1,2]}]}`,
		`{"messages":[{"role":"user","content":"x"}],"stop":["a","b"],"n":1,"max_completion_tokens":3}`,
		`{"messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},
		  {"role":"tool","tool_call_id":"c","content":"r"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"properties":{"a":{}}}}}],
		  "tool_choice":{"type":"function","function":{"name":"f"}},"parallel_tool_calls":false,"response_format":{"type":"json_schema","json_schema":{"schema":{}}}}`,
		`{"messages":[]} {}`,
		`[[[[[[[[[[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := parseChatRequest(body, 1<<16)
		if err != nil {
			if _, ok := err.(*requestError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if len(c.req.Messages) == 0 || len(c.req.Messages) > maxMessages || len(c.media) > maxMediaParts || len(c.req.Stop) > maxStops {
			t.Fatalf("accepted out of limits: %d messages, %d media", len(c.req.Messages), len(c.media))
		}
		if c.req.MaxTokens < 0 || c.req.MaxTokens > maxMaxTokens {
			t.Fatalf("max tokens %d", c.req.MaxTokens)
		}
		for _, m := range c.media {
			if m.msg >= len(c.req.Messages) || m.part >= len(c.req.Messages[m.msg].Content) {
				t.Fatalf("media ref %+v out of range", m)
			}
			p := c.req.Messages[m.msg].Content[m.part]
			if p.Type != m.kind || p.Type == engine.PartText || m.url == "" {
				t.Fatalf("media ref %+v names a %s part", m, p.Type)
			}
		}
		for _, msg := range c.req.Messages {
			for _, p := range msg.Content {
				if p.Type != engine.PartText && msg.Role != engine.RoleUser {
					t.Fatalf("media in a %s message", msg.Role)
				}
				if len(p.Data) > 1<<16 {
					t.Fatalf("inline media of %d bytes over the cap", len(p.Data))
				}
			}
		}
	})
}
