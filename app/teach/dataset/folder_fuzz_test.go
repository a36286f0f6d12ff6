package dataset

import (
	"encoding/json"
	"testing"
)

func FuzzFolderLine(f *testing.F) {
	f.Add([]byte(`{"messages": [{"role": "user", "content": [{"type": "image", "image": "a.jpg"}]}]}`))
	f.Add([]byte(`{"prompt": [{"role": "user", "content": "x"}], "chosen": "a", "rejected": "b"}`))
	f.Add([]byte(`{"type": "image_url", "image_url": {"url": "x.png"}}`))
	f.Add([]byte(`[1, 2]`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var s FolderSplit
		if err := s.add(line, "/data", "train.jsonl:1"); err != nil {
			return
		}
		if len(s.Examples)+len(s.Pairs) != 1 {
			t.Fatal("an accepted line was not kept")
		}
		kept := append(s.Examples, s.Pairs...)[0]
		if !json.Valid(kept) {
			t.Fatalf("kept invalid JSON %q", kept)
		}
	})
}
