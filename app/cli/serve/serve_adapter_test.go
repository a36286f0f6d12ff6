package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestServeListsAdapter: perch serve --adapter DIR offers the model as
// "<base>+<adapter folder name>" in /v1/models, as the app's local API does.
// loraTiny is the fixture adapter of the tiny model.
const loraTiny = "../../../testdata/goldens/lora-tiny"

func TestServeListsAdapter(t *testing.T) {
	var logs bytes.Buffer
	f, err := parseServe([]string{"--addr", "127.0.0.1:0", "--model", e2eModel, "--backend", "go", "--quiet", "--adapter", loraTiny}, &logs)
	if err != nil {
		t.Fatal(err)
	}
	s, err := startServe(f, &logs)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
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
	if len(list.Data) != 1 || list.Data[0].ID != "text-tiny+lora-tiny" {
		t.Errorf("/v1/models lists %+v", list.Data)
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
