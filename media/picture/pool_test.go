package picture

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestPoolDecodesOnceAndSharesSafely: the same bytes decode once however
// many callers ask at once, and the shared source serves rows while another
// caller converts it (run with -race).
func TestPoolDecodesOnceAndSharesSafely(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "photo420.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	p := NewPool(PoolOptions{Decoders: 1})
	before := Decodes()
	var wg sync.WaitGroup
	rows := make([][]uint8, 4)
	for i := range rows {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src, _, err := p.Decode(context.Background(), data)
			if err != nil {
				t.Error(err)
				return
			}
			if i%2 == 0 {
				src.RGB()
			}
			w, _ := src.Size()
			r, g, b := make([]uint8, w), make([]uint8, w), make([]uint8, w)
			src.Row(1, r, g, b)
			rows[i] = append(append(r, g...), b...)
		}()
	}
	wg.Wait()
	if n := Decodes() - before; n != 1 {
		t.Fatalf("4 callers decoded the same photo %d times", n)
	}
	for i := range rows[1:] {
		if !bytes.Equal(rows[i+1], rows[0]) {
			t.Fatal("callers saw different rows")
		}
	}
	if _, _, err := p.Decode(context.Background(), []byte("not a picture")); err == nil {
		t.Fatal("garbage decoded")
	}
	tiny := NewPool(PoolOptions{CacheBytes: 1}) // nothing fits: every call decodes
	before = Decodes()
	tiny.Decode(context.Background(), data)
	tiny.Decode(context.Background(), data)
	if n := Decodes() - before; n != 2 {
		t.Fatalf("a pool too small to keep the photo decoded it %d times for two calls", n)
	}
}
