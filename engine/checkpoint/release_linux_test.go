package checkpoint

import (
	"bufio"
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"perch/engine/gocpu"
	"perch/engine/safetensors"
	"perch/engine/tensor"
)

// copying is the Go backend with a FromBytes that copies raw first and says
// so, the way MLX loads weights.
type copying struct{ *gocpu.Backend }

func (c copying) FromBytes(raw []byte, dt tensor.DType, shape []int) tensor.Tensor {
	return c.Backend.FromBytes(bytes.Clone(raw), dt, shape)
}

func (copying) FromBytesCopies() bool { return true }

// TestCopyingBackendReleasesFilePages loads a 4 MiB tensor onto a copying
// backend and onto the Go backend (which aliases the mapping) after both
// tensors' file pages were read in: the mapping's resident size (from
// /proc/self/smaps) drops by the copied tensor only, and the released
// bytes still read back from the file.
func TestCopyingBackendReleasesFilePages(t *testing.T) {
	const n = 2 << 20 // bf16 values: 4 MiB per tensor
	rng := rand.New(rand.NewSource(1))
	data := map[string][]byte{}
	var ts []safetensors.Tensor
	for _, name := range []string{"copied", "mapped"} {
		raw := make([]byte, 2*n)
		rng.Read(raw)
		for i := 1; i < len(raw); i += 2 {
			raw[i] &= 0x3f // finite, modest bf16 values
		}
		data[name] = raw
		ts = append(ts, safetensors.Tensor{Name: name, DType: "BF16", Shape: []int{n}, Data: raw})
	}
	dir := t.TempDir()
	path := filepath.Join(dir, SingleFile)
	if err := safetensors.Write(path, ts, nil); err != nil {
		t.Fatal(err)
	}
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	touch := func() {
		for name, want := range data {
			if !bytes.Equal(c.tensors[name].file.Bytes(c.tensors[name].info), want) {
				t.Fatalf("%s: mapped bytes differ from the written ones", name)
			}
		}
	}
	touch()
	before := mappedRSS(t, path)
	if before < 2*2*n {
		t.Fatalf("after reading both tensors the mapping has %d bytes resident, want at least %d", before, 2*2*n)
	}

	goB := gocpu.New(gocpu.Options{})
	if _, err := c.Tensor(goB, "mapped", n); err != nil {
		t.Fatal(err)
	}
	if tensor.CopiesBytes(goB) {
		t.Fatal("the Go backend says it copies: its weights are the mapped file")
	}
	if got := mappedRSS(t, path); got < before {
		t.Errorf("the Go backend's load released file pages: %d bytes resident, %d before", got, before)
	}

	cp := copying{gocpu.New(gocpu.Options{})}
	x, err := c.Tensor(cp, "copied", n)
	if err != nil {
		t.Fatal(err)
	}
	after := mappedRSS(t, path)
	// All of the copied tensor's pages go, plus at most a page of the
	// neighbour on each side.
	if drop := before - after; drop < 2*n || drop > 2*n+2*int64(os.Getpagesize()) {
		t.Errorf("loading onto a copying backend: resident %d → %d bytes, want a drop of %d (the tensor's pages)", before, after, 2*n)
	}
	got, err := cp.Float32s(x)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := goB.Float32s(goB.FromBytes(data["copied"], tensor.BFloat16, []int{n}))
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("copied tensor [%d] = %v, want %v", i, got[i], want[i])
		}
	}
	touch() // the released range faults back in from the file, unchanged
}

// mappedRSS sums the resident size of this process's mappings of path.
func mappedRSS(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps (%v): cannot see which pages are resident", err)
	}
	defer f.Close()
	var total int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":"):
			in = len(fields) >= 6 && fields[5] == path
		case in && len(fields) == 3 && fields[0] == "Rss:":
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				t.Fatalf("smaps: %q", sc.Text())
			}
			total += kb << 10
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return total
}
