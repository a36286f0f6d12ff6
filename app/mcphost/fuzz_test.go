package mcphost

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzFrameReader: whatever a server writes, no line over the limit gets
// through, and lines within it pass unchanged.
func FuzzFrameReader(f *testing.F) {
	for _, s := range []string{"{}\n", "{\"a\":1}\n{\"b\":2}\n", "xxxxxxxxxxxxxxxxxxxx", "\n\n\n", "abc\ndefghijklmnop\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const max = 8
		r := &frameReader{r: bytes.NewReader(data), max: max}
		got, err := io.ReadAll(r)
		for _, line := range bytes.Split(got, []byte("\n")) {
			if len(line) > max {
				t.Fatalf("a %d-byte line passed a %d-byte limit", len(line), max)
			}
		}
		if err == nil && !bytes.Equal(got, data) {
			t.Fatalf("read %q from %q without an error", got, data)
		}
		if err != nil && r.failure() == nil {
			t.Fatalf("error %v without a reason kept", err)
		}
	})
}

// FuzzOpenAllowStore: any file is a store or an error, never a panic.
func FuzzOpenAllowStore(f *testing.F) {
	for _, s := range []string{`{"always":{"fs":["read_file"]}}`, `{}`, `[]`, `{"always":{"a":[1]}}`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "approvals.json")
		os.WriteFile(path, data, 0o600)
		s, err := OpenAllowStore(path)
		if err == nil {
			s.List()
		}
	})
}
