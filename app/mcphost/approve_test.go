package mcphost

import (
	"context"
	"path/filepath"
	"testing"
)

func TestGateAndAllowStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tools", "approvals.json")
	store, err := OpenAllowStore(path)
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	answer := Deny
	g := &Gate{Policy: Ask, Store: store, Ask: func(context.Context, Request) (Decision, error) {
		asked++
		return answer, nil
	}}
	req := Request{Server: "fs", Tool: "write_file"}
	ok, _ := g.Approve(context.Background(), req)
	if ok || asked != 1 {
		t.Fatalf("deny: ok %v asked %d", ok, asked)
	}
	answer = AllowOnce
	if ok, _ := g.Approve(context.Background(), req); !ok || store.Allowed("fs", "write_file") {
		t.Fatalf("allow once: ok %v, remembered %v", ok, store.Allowed("fs", "write_file"))
	}
	answer = AllowAlways
	g.Approve(context.Background(), req)
	answer = Deny
	if ok, _ := g.Approve(context.Background(), req); !ok || asked != 3 {
		t.Fatalf("after always: ok %v asked %d (want no fourth question)", ok, asked)
	}
	if ok, _ := g.Approve(context.Background(), Request{Server: "other", Tool: "write_file"}); ok {
		t.Fatal("always for fs/write_file allowed another server's tool")
	}
	reopened, err := OpenAllowStore(path)
	if err != nil || !reopened.Allowed("fs", "write_file") || len(reopened.List()["fs"]) != 1 {
		t.Fatalf("reopened store: %v %v", err, reopened.List())
	}
	if err := reopened.Revoke("fs", "write_file"); err != nil {
		t.Fatal(err)
	}
	again, _ := OpenAllowStore(path)
	if again.Allowed("fs", "write_file") {
		t.Fatal("revoked tool still allowed after reopening")
	}
	for _, p := range []Policy{AllowAll, DenyAll} {
		g := &Gate{Policy: p, Ask: func(context.Context, Request) (Decision, error) { t.Fatal("asked"); return Deny, nil }}
		if ok, _ := g.Approve(context.Background(), req); ok != (p == AllowAll) {
			t.Errorf("policy %s: ok %v", p, ok)
		}
	}
	if _, err := ParsePolicy("maybe"); err == nil {
		t.Error("policy maybe accepted")
	}
}

func TestSplitCommand(t *testing.T) {
	got, err := SplitCommand(`npx -y "@scope/server x" 'it''s' a\ b`)
	want := []string{"npx", "-y", "@scope/server x", "its", "a b"}
	if err != nil || len(got) != len(want) {
		t.Fatalf("%q %v", got, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%q, want %q", got, want)
		}
	}
	for _, bad := range []string{``, `  `, `a "b`, `a\`} {
		if _, err := SplitCommand(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzSplitCommand: any line splits or is an error, never a panic, and
// plain words come back as they were.
func FuzzSplitCommand(f *testing.F) {
	for _, s := range []string{`node server.js --root /tmp`, `a "b c" 'd'`, `\`, `"`, "x\ty\nz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words, err := SplitCommand(line)
		if err == nil && len(words) == 0 {
			t.Fatal("no words and no error")
		}
	})
}
