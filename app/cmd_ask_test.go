package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"perch/engine/golden"
	"perch/engine/mlx"
)

const tinyModel = "../testdata/models/text-tiny"

func goldenInts(t *testing.T, fixture, name string) []int32 {
	t.Helper()
	g, err := golden.Open(filepath.Join("..", "testdata", "goldens", fixture, "golden.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	v, err := g.I32(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func joinIDs(ids []int32) string {
	var s []string
	for _, id := range ids {
		s = append(s, strconv.Itoa(int(id)))
	}
	return strings.Join(s, ",")
}

// TestAskReproducesGoldenIDs: perch ask --prompt-ids ... --temperature 0
// --json gives the fixture's greedy ids, on the Go backend and on MLX.
func TestAskReproducesGoldenIDs(t *testing.T) {
	backends := []string{"go"}
	if mlx.Available() == nil {
		backends = append(backends, "mlx")
	} else {
		t.Log("libmlxc not found: perch ask checked on the Go backend only")
	}
	for _, fixture := range []string{"text-tiny", "text-tiny-q4"} {
		want := goldenInts(t, fixture, "generated_ids")
		for _, backend := range backends {
			var out, errOut bytes.Buffer
			dump := filepath.Join(t.TempDir(), "logits.npy")
			code := runAsk([]string{"--model", "../testdata/models/" + fixture, "--backend", backend,
				"--prompt-ids", joinIDs(goldenInts(t, fixture, "input_ids")), "--temperature", "0",
				"--max-tokens", "16", "--ignore-eos", "--json", "--dump-logits", dump}, &out, &errOut)
			if code != 0 {
				t.Fatalf("%s/%s: exit %d: %s %s", fixture, backend, code, errOut.String(), out.String())
			}
			var done struct {
				Type     string  `json:"type"`
				TokenIDs []int32 `json:"token_ids"`
				Stop     string  `json:"stop_reason"`
				Stats    struct {
					Backend string `json:"backend"`
				} `json:"stats"`
			}
			var tokens []int32
			sc := bufio.NewScanner(&out)
			for sc.Scan() {
				var line map[string]any
				if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
					t.Fatalf("not a JSON line: %q", sc.Text())
				}
				switch line["type"] {
				case "token":
					tokens = append(tokens, int32(line["id"].(float64)))
				case "done":
					json.Unmarshal(sc.Bytes(), &done)
				}
			}
			if !slices.Equal(done.TokenIDs, want) || !slices.Equal(tokens, want) || done.Stop != "length" || done.Stats.Backend != backend {
				t.Fatalf("%s/%s: ids %v (tokens %v, %s, %s), want %v", fixture, backend, done.TokenIDs, tokens, done.Stop, done.Stats.Backend, want)
			}
			if st, err := os.Stat(dump); err != nil || st.Size() != 128+4*1024 {
				t.Fatalf("%s/%s: --dump-logits wrote %v (%v)", fixture, backend, st, err)
			}
		}
	}
}

// TestAskErrorsAreOneLine: bad flags, a missing folder and a broken model
// give one clear line and a non-zero exit.
func TestAskErrorsAreOneLine(t *testing.T) {
	broken := t.TempDir()
	os.WriteFile(filepath.Join(broken, "config.json"), []byte("{not json"), 0o644)
	cases := map[string][]string{
		"unknown flag":   {"--nope", "hi"},
		"bad ids":        {"--model", tinyModel, "--prompt-ids", "1,x"},
		"no prompt":      {"--model", tinyModel},
		"missing folder": {"--model", "./no/such/model", "hi"},
		"broken model":   {"--model", broken, "hi"},
		"bad backend":    {"--model", tinyModel, "--backend", "tpu", "hi"},
		"missing image":  {"--model", tinyModel, "--image", "/no/such.png", "hi"},
	}
	for name, args := range cases {
		var out, errOut bytes.Buffer
		code := runAsk(args, &out, &errOut)
		lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
		if code == 0 || out.Len() != 0 {
			t.Errorf("%s: exit %d, stdout %q", name, code, out.String())
		}
		last := lines[len(lines)-1]
		if !strings.HasPrefix(last, "perch ask:") && !strings.Contains(errOut.String(), "flag provided but not defined") {
			t.Errorf("%s: stderr %q", name, errOut.String())
		}
	}
}
