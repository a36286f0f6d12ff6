package trainset

import (
	"context"
	"perch/engine/train"
	"slices"
	"strings"
	"testing"
)

// mlx-lm-lora's {"chosen": {"messages"}, "rejected": {"messages"}} rows
// encode as the {"prompt", "chosen", "rejected"} row of the same turns.
func TestConversationPairRows(t *testing.T) {
	enc := tinyEncoder(t, train.DPO)
	a := encodeOne(t, enc, `{"system": "Be brief.", "prompt": "Name a bird.", "chosen": "A robin.", "rejected": "I cannot."}`)
	b := encodeOne(t, enc, `{"chosen": {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Name a bird."}, {"role": "assistant", "content": "A robin."}]},
		"rejected": {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Name a bird."}, {"role": "assistant", "content": "I cannot."}]}}`)
	if !slices.Equal(a.Prompt, b.Prompt) || !slices.Equal(a.Chosen, b.Chosen) || !slices.Equal(a.Rejected, b.Rejected) {
		t.Fatalf("prompt/chosen/rejected and message-object forms differ:\n%+v\n%+v", a, b)
	}
	for _, c := range []struct{ line, want string }{
		{`{"chosen": {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "x"}]}, "rejected": {"messages": [{"role": "user", "content": "b"}, {"role": "assistant", "content": "y"}]}}`, "same conversation"},
		{`{"chosen": {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "x"}]}, "rejected": {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "y"}]}}`, "assistant's answer"},
		{`{"chosen": {"text": "x"}, "rejected": {"messages": []}}`, "must be a string"},
		{`{"prompt": "a", "chosen": {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "x"}]}, "rejected": {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "y"}]}}`, "drop \"prompt\""},
	} {
		_, _, _, err := enc.Encode(context.Background(), []byte(c.line))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.line, err, c.want)
		}
	}
}

// FuzzEncodeRows: the row shapes beside FuzzEncode's (message-object pairs,
// unpaired rows) never panic and give consistent rows.
func FuzzEncodeRows(f *testing.F) {
	for _, s := range []string{
		`{"chosen": {"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "a"}]}, "rejected": {"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "b"}]}}`,
		`{"prompt": "Hi", "completion": "Hello.", "label": true}`,
		`{"prompt": [{"role": "user", "content": "Hi"}], "completion": [{"role": "assistant", "content": "No."}], "label": false}`,
	} {
		f.Add([]byte(s))
	}
	encs := map[train.Method]*Encoder{}
	for _, m := range train.MethodNames() {
		encs[train.Method(m)] = tinyEncoder(f, train.Method(m))
		encs[train.Method(m)].MaxLen = 64
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		for m, enc := range encs {
			row, _, ok, err := enc.Encode(context.Background(), line)
			if err != nil || !ok {
				continue
			}
			bad := false
			switch m.Rows() {
			case train.RowsSFT:
				bad = row.PromptLen < 1 || row.PromptLen >= len(row.IDs)
			case train.RowsPairs:
				bad = len(row.Prompt) == 0 || len(row.Chosen) == 0 || len(row.Rejected) == 0
			case train.RowsUnpaired:
				bad = len(row.Prompt) == 0 || len(row.Chosen) == 0 || row.Rejected != nil
			}
			if bad || row.Tokens() > 2*64 {
				t.Fatalf("%s: inconsistent row %+v", m, row)
			}
		}
	})
}

// TRL's unpaired rows encode as the prompt and completion a chat request
// and its answer render; other shapes are refused for kto.
func TestKTORows(t *testing.T) {
	enc := tinyEncoder(t, train.KTO)
	good := encodeOne(t, enc, `{"prompt": "Name a bird.", "completion": "A robin.", "label": true}`)
	bad := encodeOne(t, enc, `{"prompt": [{"role": "user", "content": "Name a bird."}], "completion": [{"role": "assistant", "content": "A robin."}], "label": false}`)
	if !good.Label || bad.Label || !slices.Equal(good.Prompt, bad.Prompt) || !slices.Equal(good.Chosen, bad.Chosen) || good.Rejected != nil {
		t.Fatalf("string and message forms: %+v %+v", good, bad)
	}
	if c := enc.Tok.Decode(good.Chosen, false); c != "A robin.<turn|>\n" {
		t.Errorf("completion %q", c)
	}
	for _, line := range []string{`{"prompt": "a", "completion": "b"}`, `{"prompt": "a", "completion": "b", "label": "yes"}`, `{"prompt": "a", "chosen": "b", "rejected": "c"}`} {
		if _, _, _, err := enc.Encode(t.Context(), []byte(line)); err == nil || !strings.Contains(err.Error(), "label") {
			t.Errorf("%s: error %v, want one naming the label", line, err)
		}
	}
	if _, _, _, err := tinyEncoder(t, train.DPO).Encode(t.Context(), []byte(`{"prompt": "a", "completion": "b", "label": true}`)); err == nil || !strings.Contains(err.Error(), "kto") {
		t.Errorf("dpo on a KTO row: %v", err)
	}
}
