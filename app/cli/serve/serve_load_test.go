package serve

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const loadHelperEnv = "PERCH_SERVE_LOAD_HELPER"

// TestServeLoadHelper is the `perch serve` process TestServeUnderLoad
// measures: it prints its address and serves until its stdin closes.
func TestServeLoadHelper(t *testing.T) {
	if os.Getenv(loadHelperEnv) == "" {
		t.Skip("helper process for TestServeUnderLoad (runs only when that test starts it)")
	}
	f, err := parseServe([]string{"--addr", "127.0.0.1:0", "--model", e2eModel, "--backend", "go", "--quiet", "--context", "4096"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	f.apiKey = ""
	s, err := startServe(f, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("ADDR", s.addr)
	io.Copy(io.Discard, os.Stdin)
	s.close()
}

// served is a `perch serve` child process.
type served struct {
	cmd  *exec.Cmd
	url  string
	stop io.Closer
}

func startServed(t *testing.T) *served {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestServeLoadHelper$", "-test.v")
	cmd.Env = append(os.Environ(), loadHelperEnv+"=1")
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &served{cmd: cmd, stop: in}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if addr, ok := strings.CutPrefix(lines.Text(), "ADDR "); ok {
			s.url = "http://" + addr + "/v1/chat/completions"
			go io.Copy(io.Discard, out)
			return s
		}
	}
	t.Fatal("the server process did not start")
	return nil
}

// peakRSS reads the child's peak resident memory (Linux /proc), and
// resetPeak starts a new peak from its memory now.
func (s *served) peakRSS(t *testing.T) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

func (s *served) resetPeak(t *testing.T) {
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", s.cmd.Process.Pid), []byte("5"), 0); err != nil {
		t.Fatalf("resetting the peak RSS: %v", err)
	}
}

// burst sends n requests at once; body(i) gives each its body and length.
// It returns the status codes and each request's time to its answer.
func burst(t *testing.T, url string, n int, body func() (io.Reader, int64)) ([]int, []time.Duration) {
	t.Helper()
	codes, took := make([]int, n), make([]time.Duration, n)
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: n}, Timeout: time.Minute}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, size := body()
			req, _ := http.NewRequest("POST", url, r)
			req.ContentLength = size
			req.Header.Set("Content-Type", "application/json")
			start := time.Now()
			resp, err := client.Do(req)
			took[i] = time.Since(start)
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	client.CloseIdleConnections()
	return codes, took
}

// repeated streams n bytes of a repeating text without holding it all.
type repeated struct {
	chunk []byte // a whole number of the text's repeats
	left  int64
	off   int
}

func newRepeated(text string, n int64) *repeated {
	return &repeated{chunk: []byte(strings.Repeat(text, 64<<10/len(text))), left: n}
}

func (r *repeated) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.left)]
	n := 0
	for n < len(p) {
		k := copy(p[n:], r.chunk[r.off:])
		n += k
		r.off = (r.off + k) % len(r.chunk)
	}
	r.left -= int64(n)
	return n, nil
}

func summary(codes []int, took []time.Duration) string {
	count := map[int]int{}
	for _, c := range codes {
		count[c]++
	}
	s := append([]time.Duration(nil), took...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return fmt.Sprintf("statuses %v, time to answer p50 %v, max %v", count, s[len(s)/2].Round(time.Millisecond), s[len(s)-1].Round(time.Millisecond))
}

// TestServeUnderLoad is the server's limits-before-work acceptance on
// loopback, against real `perch serve` processes (peak RSS read from /proc;
// about 40 MB at rest with the tiny model):
//   - 8 concurrent 31 MB prompts are all refused (two read and found too
//     long from their length, six answered 429 before their bodies are
//     read) and the server stays under 300 MB;
//   - 16 concurrent requests of 64 different pixel-bomb PNGs (8192×8192,
//     82 KB apiece) are all refused before any image is decoded (their
//     headers add up past the request's pixel budget), under 200 MB;
//   - 16 concurrent requests of one bomb each are served or refused under
//     400 MB (two requests prepare at once; a gray bomb decodes to 64 MB);
//   - after each load the same server answers an ordinary request.
//
// On a quiet machine every refusal comes within a second (times logged:
// the slowest, a 31 MB body read and found too long, about half a second);
// the test fails past refuseWithin, which leaves room for a loaded 2-core
// CI machine (up to 2 s seen at load 5) and still catches refusals that
// wait for the work (38 s before the limits moved ahead of it).
func TestServeUnderLoad(t *testing.T) {
	const refuseWithin = 5 * time.Second
	if runtime.GOOS != "linux" {
		t.Skip("reads the server's peak memory from /proc (Linux)")
	}
	if _, err := os.Stat(filepath.Join(e2eModel, "config.json")); err != nil {
		t.Skipf("fixture model %s not present: %v", e2eModel, err)
	}
	const mb = 1 << 20
	// Each load meets a fresh server, so one's memory does not count against the next.
	s := startServed(t)
	t.Logf("server at rest: peak RSS %d MB", s.peakRSS(t)/mb)

	// 8 × 31 MB of text.
	head, tail := `{"max_tokens":4,"messages":[{"role":"user","content":"`, `"}]}`
	const words = 31 * mb / 6
	s.resetPeak(t)
	codes, took := burst(t, s.url, 8, func() (io.Reader, int64) {
		return io.MultiReader(strings.NewReader(head), newRepeated("perch ", 6*words), strings.NewReader(tail)),
			int64(len(head) + 6*words + len(tail))
	})
	peak := s.peakRSS(t)
	t.Logf("8 × 31 MB prompts: %s; server peak RSS %d MB", summary(codes, took), peak/mb)
	for i, c := range codes {
		if c != 400 && c != 429 {
			t.Errorf("31 MB prompt %d: status %d, want a refusal (400 too long, or 429 busy)", i, c)
		}
		if took[i] > refuseWithin {
			t.Errorf("31 MB prompt %d took %v to be refused, want under %v", i, took[i], refuseWithin)
		}
	}
	if peak > 300*mb {
		t.Errorf("server peak RSS %d MB with 8 × 31 MB prompts, want under 300 MB", peak/mb)
	}
	answersNormally(t, s, "8 × 31 MB prompts")

	// Pixel bombs: an 8192×8192 gray PNG compresses to ~64 KB.
	var bomb bytes.Buffer
	if err := png.Encode(&bomb, image.NewGray(image.Rect(0, 0, 8192, 8192))); err != nil {
		t.Fatal(err)
	}
	// n different files (a text chunk numbers each): the same bytes twice
	// would be decoded once.
	bombs := func(n int) []byte {
		var sb strings.Builder
		sb.WriteString(`{"max_tokens":2,"messages":[{"role":"user","content":[{"type":"text","text":"what is this"}`)
		for i := 0; i < n; i++ {
			sb.WriteString(`,{"type":"image_url","image_url":{"url":"data:image/png;base64,` +
				base64.StdEncoding.EncodeToString(pngWithText(bomb.Bytes(), fmt.Sprint("bomb ", i))) + `"}}`)
		}
		sb.WriteString(`]}]}`)
		return []byte(sb.String())
	}
	for _, c := range []struct {
		per   int
		bound int64
		all   bool // every request must be refused
	}{{64, 200 * mb, true}, {1, 400 * mb, false}} {
		body := bombs(c.per)
		s = startServed(t)
		s.resetPeak(t)
		codes, took = burst(t, s.url, 16, func() (io.Reader, int64) { return bytes.NewReader(body), int64(len(body)) })
		peak = s.peakRSS(t)
		t.Logf("16 × %d pixel bombs (%d KB each, %d MB a request): %s; server peak RSS %d MB",
			c.per, bomb.Len()>>10, len(body)/mb, summary(codes, took), peak/mb)
		for i, code := range codes {
			if (c.all && code != 400 && code != 429) || (!c.all && code != 200 && code != 400 && code != 429) {
				t.Errorf("%d bombs, request %d: status %d", c.per, i, code)
			}
			if code != 200 && took[i] > refuseWithin {
				t.Errorf("%d bombs, request %d took %v to be refused, want under %v", c.per, i, took[i], refuseWithin)
			}
		}
		if peak > c.bound {
			t.Errorf("server peak RSS %d MB with 16 × %d bombs, want under %d MB", peak/mb, c.per, c.bound/mb)
		}
		answersNormally(t, s, fmt.Sprintf("16 × %d pixel bombs", c.per))
	}
}

// answersNormally: right after a load, the server answers an ordinary question.
func answersNormally(t *testing.T, s *served, load string) {
	t.Helper()
	ok := `{"max_tokens":3,"temperature":0,"messages":[{"role":"user","content":"hello"}]}`
	codes, took := burst(t, s.url, 1, func() (io.Reader, int64) { return strings.NewReader(ok), int64(len(ok)) })
	t.Logf("a normal request after %s: status %d in %v", load, codes[0], took[0].Round(time.Millisecond))
	if codes[0] != 200 {
		t.Errorf("a normal request after %s: status %d", load, codes[0])
	}
}

// pngWithText inserts a tEXt chunk after a PNG's header chunk.
func pngWithText(p []byte, text string) []byte {
	const ihdrEnd = 8 + 4 + 4 + 13 + 4 // signature, then IHDR's length, type, data and CRC
	data := append([]byte("Comment\x00"), text...)
	chunk := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	chunk = append(chunk, "tEXt"...)
	chunk = append(chunk, data...)
	chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(chunk[4:]))
	return append(append(append([]byte(nil), p[:ihdrEnd]...), chunk...), p[ihdrEnd:]...)
}
