package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
)

// TestServeListsAdapter: perch serve --adapter DIR offers the model as
// "<base>+<adapter folder name>" in /v1/models, as the app's local API does.
func TestServeListsAdapter(t *testing.T) {
	var logs bytes.Buffer
	f, err := parseServe([]string{"--addr", "127.0.0.1:0", "--model", tinyModel, "--backend", "go", "--quiet", "--adapter", loraTiny}, &logs)
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
