package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"perch/engine"
)

// goroutinesSettle waits for the goroutine count to fall back to base.
func goroutinesSettle(base int) int {
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); n > base && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		time.Sleep(20 * time.Millisecond)
	}
	return n
}

// TestLoad64StreamsQueue8: 64 concurrent streaming requests against an
// engine queue of 8. Eight are admitted and served one at a time in
// admission order, the other 56 get 429 at once (latency is measured and
// logged; BenchmarkBusy429 measures it precisely), nothing deadlocks, and
// every goroutine is gone afterwards.
func TestLoad64StreamsQueue8(t *testing.T) {
	base := runtime.NumGoroutine()
	f := newFakeEngine(8, "a", "b", "c", "d", "e")
	f.tagTokens = true
	f.stepDelay = 5 * time.Millisecond
	release := f.hold()
	s := New(Options{Engine: f, Model: testModel, Preparing: 64}) // the queue's limit is under test, not the intake's
	var serverMu sync.Mutex
	var serverBusy []time.Duration // handler time of each 429, measured in the server
	h := s.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if rec.status == 429 {
			serverMu.Lock()
			serverBusy = append(serverBusy, time.Since(start))
			serverMu.Unlock()
		}
	}))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

	type result struct {
		status  int
		latency time.Duration // to response headers
		id      string        // the engine job, from the first token
		done    time.Time
		err     error
	}
	results := make([]result, 64)
	var headers, wg sync.WaitGroup
	headers.Add(64)
	wg.Add(64)
	for i := range results {
		go func() {
			defer wg.Done()
			r := &results[i]
			start := time.Now()
			resp, err := client.Post(ts.URL+"/v1/chat/completions", "application/json",
				strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
			r.latency = time.Since(start)
			headers.Done()
			if err != nil {
				r.err = err
				return
			}
			defer resp.Body.Close()
			r.status = resp.StatusCode
			if resp.StatusCode != 200 {
				io.Copy(io.Discard, resp.Body)
				return
			}
			events := readSSE(t, resp.Body)
			r.done = time.Now()
			if events[len(events)-1] != "[DONE]" || !strings.Contains(events[len(events)-2], `"finish_reason":"stop"`) {
				r.err = fmt.Errorf("incomplete stream: %v", events)
			}
			_, r.id, _ = strings.Cut(events[1], `"content":"#`)
			r.id, _, _ = strings.Cut(r.id, `"`)
		}()
	}
	headers.Wait() // every request has its answer (200 headers for the admitted)
	release()
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(30 * time.Second):
		t.Fatal("deadlock: streams did not finish")
	}

	var busy []time.Duration
	var served []result
	for _, r := range results {
		switch {
		case r.err != nil:
			t.Fatal(r.err)
		case r.status == 429:
			busy = append(busy, r.latency)
		case r.status == 200:
			served = append(served, r)
		default:
			t.Fatalf("status %d", r.status)
		}
	}
	if len(served) != 8 || len(busy) != 56 {
		t.Fatalf("%d served, %d busy; want 8 and 56", len(served), len(busy))
	}
	admitted, order, cancelled, maxActive := f.snapshot()
	if fmt.Sprint(admitted) != fmt.Sprint(order) || maxActive != 1 || cancelled != 0 {
		t.Fatalf("admitted %v, served %v, max active %d, cancelled %d", admitted, order, maxActive, cancelled)
	}
	sort.Slice(served, func(i, j int) bool { return served[i].done.Before(served[j].done) })
	var ids []string
	for _, r := range served {
		ids = append(ids, r.id)
	}
	got := strings.Join(ids, ",")
	if fmt.Sprint(sortedIDs(ids)) != "[1 2 3 4 5 6 7 8]" {
		t.Fatalf("the 200 streams carry engine jobs %s, want 1..8 once each", got)
	}
	t.Logf("engine served jobs in admission order %v; clients saw [DONE] in job order %s", order, got)
	sort.Slice(busy, func(i, j int) bool { return busy[i] < busy[j] })
	sort.Slice(serverBusy, func(i, j int) bool { return serverBusy[i] < serverBusy[j] })
	t.Logf("429 latency over 56 requests: in the server p50 %v, max %v; at the client (64 connects at once on this machine) p50 %v, p90 %v, max %v",
		serverBusy[len(serverBusy)/2], serverBusy[len(serverBusy)-1], busy[len(busy)/2], busy[len(busy)*9/10], busy[len(busy)-1])
	if serverBusy[len(serverBusy)-1] > 2*time.Second {
		t.Fatalf("a 429 took %v in the server; busy answers must not wait", serverBusy[len(serverBusy)-1])
	}

	ts.Close()
	f.close()
	client.CloseIdleConnections()
	if n := goroutinesSettle(base); n > base {
		buf := make([]byte, 1<<16)
		t.Fatalf("goroutine leak: %d before, %d after\n%s", base, n, buf[:runtime.Stack(buf, true)])
	}
}

// TestDisconnectFreesSlot: a client that leaves mid-stream cancels its
// generation within a step, and its queue slot serves the next request;
// a client that leaves while queued never reaches the engine's loop.
func TestDisconnectFreesSlot(t *testing.T) {
	base := runtime.NumGoroutine()
	f := newFakeEngine(2, strings.Split(strings.Repeat("x", 200), "")...)
	f.stepDelay = 10 * time.Millisecond
	s := New(Options{Engine: f, Model: testModel})
	ts := httptest.NewServer(s.Handler())
	client := &http.Client{Transport: &http.Transport{}}
	body := `{"stream":true,"messages":[{"role":"user","content":"hi"}]}`

	ctxA, cancelA := context.WithCancel(context.Background())
	reqA, _ := http.NewRequestWithContext(ctxA, "POST", ts.URL+"/v1/chat/completions", strings.NewReader(body))
	respA, err := client.Do(reqA)
	if err != nil {
		t.Fatal(err)
	}
	ctxB, cancelB := context.WithCancel(context.Background())
	reqB, _ := http.NewRequestWithContext(ctxB, "POST", ts.URL+"/v1/chat/completions", strings.NewReader(body))
	respB, err := client.Do(reqB) // queued behind A
	if err != nil || respB.StatusCode != 200 {
		t.Fatalf("B: %v", err)
	}
	if resp := post(t, ts.URL, body); resp.StatusCode != 429 {
		t.Fatalf("queue of 2 full, third got %d", resp.StatusCode)
	} else {
		resp.Body.Close()
	}
	br := bufio.NewReader(respA.Body)
	for i := 0; i < 3; i++ { // role chunk and two tokens
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		br.ReadString('\n')
	}
	cancelB() // B leaves while queued
	time.Sleep(20 * time.Millisecond)
	left := time.Now()
	cancelA() // A leaves mid-stream
	respA.Body.Close()
	respB.Body.Close()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, _, c, _ := f.snapshot(); c == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the engine never saw the disconnects")
		}
	}
	t.Logf("disconnects reached the engine %v after the client left", time.Since(left).Round(time.Millisecond))
	// Both slots are free again: two new requests are admitted.
	f.tokens = f.tokens[:3]
	f.stepDelay = 0
	for i := 0; i < 2; i++ {
		resp := post(t, ts.URL, body)
		events := readSSE(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || events[len(events)-1] != "[DONE]" {
			t.Fatalf("after the disconnects: %d %v", resp.StatusCode, events)
		}
	}
	_, _, _, maxActive := f.snapshot()
	if maxActive != 1 {
		t.Fatalf("max active %d", maxActive)
	}
	ts.Close()
	f.close()
	client.CloseIdleConnections()
	http.DefaultClient.CloseIdleConnections()
	if n := goroutinesSettle(base); n > base {
		t.Fatalf("goroutine leak: %d before, %d after", base, n)
	}
}

var _ = engine.ErrBusy

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Flush() { r.ResponseWriter.(http.Flusher).Flush() }

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func sortedIDs(ids []string) []int {
	var out []int
	for _, s := range ids {
		var n int
		fmt.Sscan(s, &n)
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}
