package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The local API lists the model with each adapter as "<model>+<adapter>"
// and answers a request naming one with that adapter (a real HTTP client
// on loopback).
func TestAdaptersListedAndServed(t *testing.T) {
	f := newFakeEngine(4, "Hi", "!")
	def := ""
	_, ts := newTestServer(t, f, Options{Adapters: func() ([]AdapterModel, string) {
		return []AdapterModel{{Name: "my-style", Dir: "/adapters/a1"}, {Name: "legal", Dir: "/adapters/a2"}}, def
	}})
	resp, err := http.Get(ts.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Data []struct{ ID string } `json:"data"`
	}
	json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	base := testModel.ID
	if got := strings.Join(ids, ","); got != base+","+base+"+my-style,"+base+"+legal" {
		t.Fatalf("models %q", got)
	}
	if r, _ := http.Get(ts.URL + "/v1/models/" + base + "+legal"); r.StatusCode != 200 {
		t.Fatalf("GET one adapter model: %d", r.StatusCode)
	}
	chat := func(model string) (int, map[string]any) {
		body := `{"messages":[{"role":"user","content":"Hello"}]`
		if model != "-" {
			body += `,"model":"` + model + `"`
		}
		r := post(t, ts.URL, body+"}")
		defer r.Body.Close()
		raw, _ := io.ReadAll(r.Body)
		var out map[string]any
		json.Unmarshal(raw, &out)
		return r.StatusCode, out
	}
	for _, c := range []struct{ model, answeredAs, adapter string }{
		{base + "+my-style", base + "+my-style", "/adapters/a1"},
		{base, base, ""},
		{"gpt-4o", base, ""}, // a client's own name: the model alone
		{"-", base, ""},
	} {
		code, out := chat(c.model)
		f.mu.Lock()
		got := f.requests[len(f.requests)-1].Adapter
		f.mu.Unlock()
		if code != 200 || out["model"] != c.answeredAs || got != c.adapter {
			t.Fatalf("model %q: %d, answered as %v with adapter %q", c.model, code, out["model"], got)
		}
	}
	// The app's current choice answers requests that name no model.
	def = "legal"
	if _, out := chat("-"); out["model"] != base+"+legal" {
		t.Fatalf("default: %v", out["model"])
	}
	code, out := chat(base + "+nope")
	if code != 404 || !strings.Contains(out["error"].(map[string]any)["message"].(string), base+"+my-style") {
		t.Fatalf("unknown adapter: %d %v", code, out)
	}
}
