package cli

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

const tinyModel = "../../testdata/models/text-tiny"

func goldenInts(t *testing.T, fixture, name string) []int32 {
	t.Helper()
	g, err := golden.Open(filepath.Join("..", "..", "testdata", "goldens", fixture, "golden.safetensors"))
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
			code := runAsk([]string{"--model", "../../testdata/models/" + fixture, "--backend", backend,
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

// TestChatFollowUpSkipsTheTower: in perch chat, a second question about the
// photo of the first turn reuses the cached prefix (the image included), so
// no tower runs; --json stats show it.
func TestChatFollowUpSkipsTheTower(t *testing.T) {
	var out, errOut bytes.Buffer
	in := strings.NewReader("What is in the picture?\nAnd what colour is it?\n")
	code := runChat([]string{"--model", tinyModel, "--backend", "go", "--temperature", "0", "--max-tokens", "4", "--json",
		"--image", "../../testdata/goldens/vision-tiny/image.png"}, in, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	type stats struct {
		PromptTokens int            `json:"prompt_tokens"`
		Reused       int            `json:"prefix_reused_tokens"`
		Hits         int            `json:"encoder_cache_hits"`
		TowerMS      float64        `json:"tower_ms"`
		ByKind       map[string]int `json:"prompt_tokens_by_kind"`
	}
	var turns []stats
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var line struct {
			Type  string `json:"type"`
			Stats stats  `json:"stats"`
		}
		json.Unmarshal(sc.Bytes(), &line)
		if line.Type == "done" {
			turns = append(turns, line.Stats)
		}
	}
	if len(turns) != 2 {
		t.Fatalf("%d turns answered: %s", len(turns), out.String())
	}
	first, second := turns[0], turns[1]
	if first.ByKind["image"] == 0 || first.TowerMS == 0 || first.Reused != 0 {
		t.Fatalf("first turn: %+v", first)
	}
	// The first prompt ends with the empty thought channel the template
	// adds for generation and strips from history: reuse stops there.
	if second.Reused < first.PromptTokens-12 || second.TowerMS != 0 || second.Hits != 0 {
		t.Fatalf("follow-up re-ran work: %+v (first prompt %d tokens)", second, first.PromptTokens)
	}
}
