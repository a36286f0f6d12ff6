package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"perch/engine"
)

const benchTokens = 256

// BenchmarkStreamOverhead measures what the HTTP server adds per streamed
// token over consuming the engine's channel directly, with a fake engine
// that produces tokens instantly (target: ≤ 0.2 ms/token). Each iteration
// streams benchTokens tokens both ways; the metrics are per token.
func BenchmarkStreamOverhead(b *testing.B) {
	texts := make([]string, benchTokens)
	for i := range texts {
		texts[i] = " word"
	}
	f := newFakeEngine(8, texts...)
	s := New(Options{Engine: f, Model: testModel})
	ts := httptest.NewServer(s.Handler())
	defer func() { ts.Close(); f.close() }()
	client := &http.Client{Transport: &http.Transport{}}
	body := `{"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`

	var direct, served time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		ch, err := f.Generate(context.Background(), engine.Request{})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for ev := range ch {
			if ev.Kind == engine.EventToken {
				n++
			}
		}
		direct += time.Since(t0)

		t1 := time.Now()
		resp, err := client.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		served += time.Since(t1)
		if n != benchTokens || strings.Count(string(raw), `"content":" word"`) != benchTokens {
			b.Fatalf("direct %d tokens; the stream is missing tokens", n)
		}
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N*benchTokens) / 1e6 }
	b.ReportMetric(per(direct), "direct-ms/token")
	b.ReportMetric(per(served), "http-ms/token")
	b.ReportMetric(per(served-direct), "overhead-ms/token")
}

// BenchmarkBusy429 measures a full-queue answer end to end over loopback
// (one client, connection reused).
func BenchmarkBusy429(b *testing.B) {
	f := newFakeEngine(1, "x")
	release := f.hold()
	s := New(Options{Engine: f, Model: testModel})
	ts := httptest.NewServer(s.Handler())
	defer func() { release(); ts.Close(); f.close() }()
	ch, err := f.Generate(context.Background(), engine.Request{}) // fill the queue
	if err != nil {
		b.Fatal(err)
	}
	go drain(ch)
	client := &http.Client{Transport: &http.Transport{}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := client.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(chatBody))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 429 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}

func drain(events <-chan engine.Event) {
	for range events {
	}
}
