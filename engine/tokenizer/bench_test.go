package tokenizer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"perch/engine/tokenizer/realvocab"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	sugarme "github.com/sugarme/tokenizer/pretrained"
)

// BenchmarkEncodeGemma3Corpus encodes the ~100 KB corpus with the real
// Gemma 3 tokenizer and, when node and the cached oracle are present, times
// the transformers.js tokenizer on the same text in the same run. Metrics:
// tok/s (Go), js-tok/s, and go/js (the ratio; the target is ≥ 1).
func BenchmarkEncodeGemma3Corpus(b *testing.B) {
	tok := gemma3(b)
	_, text := readCorpus(b)
	n := len(tok.Encode(text, false))
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		tok.Encode(text, false)
	}
	goRate := float64(n*b.N) / time.Since(start).Seconds()
	b.StopTimer()
	b.ReportMetric(goRate, "tok/s")
	js, err := jsBench()
	if err != nil {
		b.Logf("JavaScript side skipped: %v", err)
		return
	}
	b.ReportMetric(js.TokensPerSecond, "js-tok/s")
	b.ReportMetric(goRate/js.TokensPerSecond, "go/js")
	b.Logf("%d bytes → %d tokens; Go %.0f tok/s, JS %.0f tok/s (node, same text, same run): Go/JS = %.1fx",
		len(text), n, goRate, js.TokensPerSecond, goRate/js.TokensPerSecond)
}

type jsResult struct {
	Tokens          int     `json:"tokens"`
	TokensPerSecond float64 `json:"tokens_per_second"`
	LoadSeconds     float64 `json:"load_seconds"`
	RSSMB           float64 `json:"rss_mb"`
}

var jsCache *jsResult

func jsBench() (*jsResult, error) {
	if jsCache != nil {
		return jsCache, nil
	}
	if _, err := exec.LookPath("node"); err != nil {
		return nil, fmt.Errorf("node not installed")
	}
	out, err := exec.Command("node", filepath.Join("testdata", "oracle", "oracle.js"), "bench", realvocab.Cache(repoRoot), corpusPath, "5").Output()
	if err != nil {
		return nil, fmt.Errorf("node oracle: %v", err)
	}
	var r jsResult
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("node oracle output: %v", err)
	}
	jsCache = &r
	return &r, nil
}

// BenchmarkEncodeChatPrompt encodes a 2 KB chat prompt (a typical request).
func BenchmarkEncodeChatPrompt(b *testing.B) {
	tok := gemma3(b)
	prompt := "<bos><start_of_turn>user\n" + strings.Repeat("Summarise this paragraph about herons, lakes and early mornings, please. ", 28) + "<end_of_turn>\n<start_of_turn>model\n"
	n := len(tok.Encode(prompt, false))
	b.SetBytes(int64(len(prompt)))
	b.ResetTimer()
	for range b.N {
		tok.Encode(prompt, false)
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tok/s")
}

// BenchmarkLoadGemma3 times Load of the real 262k tokenizer and reports the
// memory of a fresh process that loaded it: heap-MB (live heap after GC),
// rss-MB (resident after GC), peak-rss-MB; sugarme-* are the same numbers
// for github.com/sugarme/tokenizer's loader. The budget is ≤ 100 MB resident.
func BenchmarkLoadGemma3(b *testing.B) {
	gemma3(b) // skip when absent
	dir := filepath.Join(realvocab.Cache(repoRoot), "gemma3")
	for _, lib := range []string{"perch", "sugarme"} {
		m, err := measureLoadInChild(lib, dir)
		if err != nil {
			b.Fatalf("%s: %v", lib, err)
		}
		prefix := ""
		if lib == "sugarme" {
			prefix = "sugarme-"
		}
		b.ReportMetric(m["heap"], prefix+"heap-MB")
		b.ReportMetric(m["rss"], prefix+"rss-MB")
		b.ReportMetric(m["peak"], prefix+"peak-rss-MB")
		b.ReportMetric(m["seconds"], prefix+"load-s")
		b.Logf("%-8s load %.2fs, live heap %.1f MB, RSS %.1f MB after GC (%.1f MB once scavenged), peak RSS %.1f MB",
			lib, m["seconds"], m["heap"], m["rss"], m["scavenged"], m["peak"])
	}
	b.ResetTimer()
	for range b.N {
		if _, err := Load(dir); err != nil {
			b.Fatal(err)
		}
	}
}

const memChildEnv = "PERCH_TOKENIZER_MEM_CHILD"

func measureLoadInChild(lib, dir string) (map[string]float64, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoadMemoryChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), memChildEnv+"="+lib+":"+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "MEM "); ok {
			m := map[string]float64{}
			if err := json.Unmarshal([]byte(rest), &m); err != nil {
				return nil, err
			}
			return m, nil
		}
	}
	return nil, fmt.Errorf("child printed no measurement: %s", out)
}

// TestLoadMemoryChild runs only inside BenchmarkLoadGemma3's child process.
func TestLoadMemoryChild(t *testing.T) {
	spec := os.Getenv(memChildEnv)
	if spec == "" {
		return
	}
	lib, dir, _ := strings.Cut(spec, ":")
	start := time.Now()
	var keep any
	var err error
	if lib == "sugarme" {
		keep, err = sugarme.FromFile(filepath.Join(dir, "tokenizer.json"))
	} else {
		keep, err = Load(dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	secs := time.Since(start).Seconds()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, peak := procStatusMB("VmRSS"), procStatusMB("VmHWM")
	debug.FreeOSMemory()
	scav := procStatusMB("VmRSS")
	runtime.KeepAlive(keep)
	fmt.Printf("MEM {\"seconds\": %.3f, \"heap\": %.1f, \"rss\": %.1f, \"scavenged\": %.1f, \"peak\": %.1f}\n",
		secs, float64(ms.HeapAlloc)/(1<<20), rss, scav, peak)
}

// procStatusMB reads a memory field of /proc/self/status (Linux); -1
// elsewhere.
func procStatusMB(field string) float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return -1
}
