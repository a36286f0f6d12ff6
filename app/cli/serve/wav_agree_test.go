package serve

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"perch/app/cli"
	"strings"
	"testing"
)

// wavWithSizes is a 16 kHz mono PCM16 WAV of n silent samples whose RIFF,
// fmt and data sizes say what the caller wants, true or not.
func wavWithSizes(riff, fmtSize, dataSize uint32, n int) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString("RIFF")
	binary.Write(&b, le, riff)
	b.WriteString("WAVEfmt ")
	binary.Write(&b, le, fmtSize)
	for _, v := range []any{uint16(1), uint16(1), uint32(16000), uint32(32000), uint16(2), uint16(16)} {
		binary.Write(&b, le, v)
	}
	b.WriteString("data")
	binary.Write(&b, le, dataSize)
	b.Write(make([]byte, 2*n))
	return b.Bytes()
}

// TestWAVVerdictsAgree: a WAV with lying sizes gets the same verdict from
// `perch serve` (the model's processor) and `perch media inspect`: both
// take it (sizes clamped to the file) or both refuse it with the same reason.
func TestWAVVerdictsAgree(t *testing.T) {
	if _, err := os.Stat(filepath.Join(e2eModel, "config.json")); err != nil {
		t.Skipf("fixture model %s not present: %v", e2eModel, err)
	}
	var logs bytes.Buffer
	f, err := parseServe([]string{"--addr", "127.0.0.1:0", "--model", e2eModel, "--backend", "go", "--quiet"}, &logs)
	if err != nil {
		t.Fatal(err)
	}
	f.apiKey = ""
	s, err := startServe(f, &logs)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	accepted := 0
	cases := []struct {
		name string
		wav  []byte
	}{
		{"true sizes", wavWithSizes(36+3200, 16, 3200, 1600)},
		{"RIFF size 0xffffffff", wavWithSizes(0xffffffff, 16, 3200, 1600)},
		{"RIFF size too small", wavWithSizes(4, 16, 3200, 1600)},
		{"data size past the end", wavWithSizes(36+3200, 16, 0xfffffff0, 1600)},
		{"odd data size", wavWithSizes(36+3200, 16, 3201, 1600)},
		{"data size 0", wavWithSizes(36+3200, 16, 0, 1600)},
		{"fmt size past the end", wavWithSizes(36+3200, 0xfffffff0, 3200, 1600)},
		{"fmt size swallowing data", wavWithSizes(36+3200, 24, 3200, 1600)},
		{"ten samples", wavWithSizes(36+20, 16, 20, 10)},
	}
	for _, c := range cases {
		body := `{"max_tokens":1,"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"` +
			base64.StdEncoding.EncodeToString(c.wav) + `","format":"wav"}}]}]}`
		resp, err := http.Post("http://"+s.addr.String()+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		path := filepath.Join(t.TempDir(), "clip.wav")
		os.WriteFile(path, c.wav, 0o600)
		var out, errb bytes.Buffer
		code := cli.Verbs["media"].Streams([]string{"inspect", path}, nil, &out, &errb)
		served, inspected := resp.StatusCode == 200, code == 0
		if served != inspected {
			t.Errorf("%s: the server says %d (%.100s), inspect says %d (%s)", c.name, resp.StatusCode, answer, code, strings.TrimSpace(errb.String()))
			continue
		}
		if !served {
			_, why, _ := strings.Cut(strings.TrimSpace(errb.String()), "clip.wav: ")
			var e struct {
				Error struct{ Message string } `json:"error"`
			}
			json.Unmarshal(answer, &e)
			if why == "" || !strings.Contains(e.Error.Message, why) {
				t.Errorf("%s: refused for different reasons: server %.200s, inspect %q", c.name, answer, why)
			}
		} else {
			accepted++
		}
	}
	t.Logf("%d of %d WAVs taken by both, the rest refused by both for the same reason", accepted, len(cases))
	if accepted < 3 {
		t.Fatalf("only %d WAVs taken: the test no longer tells lenient from strict", accepted)
	}
}
