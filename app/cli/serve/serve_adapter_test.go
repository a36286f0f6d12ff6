package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"perch/app/history"
)

// loraTiny is the fixture adapter of the tiny model.
const loraTiny = "../../../testdata/goldens/lora-tiny"

// serveModels starts perch serve with args and returns its /v1/models ids
// and the server (closed at the test's end).
func serveModels(t *testing.T, args ...string) ([]string, *serving) {
	t.Helper()
	var logs bytes.Buffer
	f, err := parseServe(append([]string{"--addr", "127.0.0.1:0", "--model", e2eModel, "--backend", "go", "--quiet"}, args...), &logs)
	if err != nil {
		t.Fatal(err)
	}
	s, err := startServe(f, &logs)
	if err != nil {
		t.Fatalf("%v\n%s", err, logs.String())
	}
	t.Cleanup(s.close)
	resp, err := http.Get("http://" + s.addr.String() + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range list.Data {
		ids = append(ids, d.ID)
	}
	return ids, s
}

// TestServeListsAdapter: perch serve --adapter DIR offers the model as
// "<base>+<adapter folder name>" in /v1/models, as the app's local API does.
func TestServeListsAdapter(t *testing.T) {
	ids, _ := serveModels(t, "--adapter", loraTiny, "--library", "")
	if !slices.Equal(ids, []string{"text-tiny+lora-tiny"}) {
		t.Errorf("/v1/models lists %q", ids)
	}
}

// greedy asks s for a short greedy answer as model and returns the
// answer's text and the model it was answered as.
func greedy(t *testing.T, s *serving, model string) (text, as string) {
	t.Helper()
	body := `{"model": "` + model + `", "temperature": 0, "max_tokens": 12, "messages": [{"role": "user", "content": "Which bird sings?"}]}`
	resp, err := http.Post("http://"+s.addr.String()+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 || len(out.Choices) != 1 {
		t.Fatalf("%s: status %d, %+v, %v", model, resp.StatusCode, out, err)
	}
	return out.Choices[0].Message.Content, out.Model
}

// TestServeOffersLibrary: perch serve offers the Teach library's adapters
// made for its model as "<base>+<name>" (adapters of other models are not
// offered), and a request naming one answers with that adapter: as
// --adapter with the same folder does, unlike the base model.
func TestServeOffersLibrary(t *testing.T) {
	lib := t.TempDir()
	store, _, err := history.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.Abs(loraTiny)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []history.Adapter{{Name: "my-style", Dir: dir, Base: "text-tiny"}, {Name: "other", Dir: dir, Base: "mlx-community/other"}} {
		if err := store.PutAdapter(&a); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()

	ids, s := serveModels(t, "--library", lib)
	if !slices.Equal(ids, []string{"text-tiny", "text-tiny+my-style"}) {
		t.Fatalf("/v1/models lists %q", ids)
	}
	withLib, as := greedy(t, s, "text-tiny+my-style")
	if as != "text-tiny+my-style" {
		t.Errorf("answered as %q", as)
	}
	plain, _ := greedy(t, s, "text-tiny")

	ids, pinned := serveModels(t, "--adapter", loraTiny, "--library", lib)
	if !slices.Equal(ids, []string{"text-tiny+lora-tiny", "text-tiny+my-style"}) {
		t.Fatalf("with --adapter, /v1/models lists %q", ids)
	}
	withFlag, _ := greedy(t, pinned, "text-tiny+lora-tiny")
	if withLib != withFlag || withLib == plain {
		t.Fatalf("library adapter %q, --adapter %q, base %q: want the first two equal and unlike the base", withLib, withFlag, plain)
	}
}

// TestServeAdapter: perch serve --adapter loads it for every request, and
// one that does not fit the model is refused before listening.
func TestServeAdapter(t *testing.T) {
	var logs bytes.Buffer
	for _, c := range []struct {
		adapter string
		ok      bool
	}{{loraTiny, true}, {t.TempDir(), false}} {
		f, err := parseServe([]string{"--addr", "127.0.0.1:0", "--model", e2eModel, "--backend", "go", "--quiet", "--adapter", c.adapter}, &logs)
		if err != nil {
			t.Fatal(err)
		}
		s, err := startServe(f, &logs)
		if (err == nil) != c.ok {
			t.Fatalf("--adapter %s: %v", c.adapter, err)
		}
		if err == nil {
			s.close()
		} else if !strings.Contains(err.Error(), c.adapter) {
			t.Errorf("the error does not name the adapter: %v", err)
		}
	}
}

func TestServeRefusesOpenLANWithoutKey(t *testing.T) {
	var errb bytes.Buffer
	code := runServe([]string{"--addr", "0.0.0.0:0", "--api-key", ""}, &bytes.Buffer{}, &errb)
	if code != 1 || !strings.Contains(errb.String(), "API key") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	// A *.localhost name that resolves to the LAN (a hosts-file entry, here
	// an injected resolver) is refused before the model loads.
	f, err := parseServe([]string{"--addr", "lan.localhost:0", "--model", "no-such-model-folder"}, &errb)
	if err != nil {
		t.Fatal(err)
	}
	f.apiKey = ""
	f.lookup = func(context.Context, string) ([]string, error) { return []string{"192.168.7.7"}, nil }
	if s, err := startServe(f, &errb); err == nil || !strings.Contains(err.Error(), "API key") || !strings.Contains(err.Error(), "192.168.7.7") {
		if s != nil {
			s.close()
		}
		t.Fatalf("lan.localhost resolving to 192.168.7.7: %v", err)
	}
}
