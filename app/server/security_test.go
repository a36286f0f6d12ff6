package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"perch/media/fetch"
)

func do(t *testing.T, method, url, host string, hdr map[string]string, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if host != "" {
		req.Host = host
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

const chatBody = `{"messages":[{"role":"user","content":"hi"}]}`

func TestHostAndOriginChecks(t *testing.T) {
	f := newFakeEngine(8, "ok")
	_, ts := newTestServer(t, f, Options{})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(ts.URL, "http://"))
	chat := ts.URL + "/v1/chat/completions"
	cases := []struct {
		name         string
		host, origin string
		method       string
		status       int
	}{
		{"evil host", "evil.example", "", "POST", 403},
		{"evil host with port", "evil.example:" + port, "", "POST", 403},
		{"rebinding-style name", "127.0.0.1.nip.io:" + port, "", "POST", 403},
		{"LAN IP on a loopback server", "192.168.1.5:" + port, "", "POST", 403},
		{"localhost", "localhost:" + port, "", "POST", 200},
		{"127.0.0.1", "127.0.0.1:" + port, "", "POST", 200},
		{"[::1]", "[::1]:" + port, "", "POST", 200},
		{"app.localhost", "app.localhost:" + port, "", "POST", 200},
		{"evil origin", "", "https://evil.example", "POST", 403},
		{"null origin", "", "null", "POST", 403},
		{"evil preflight", "", "https://evil.example", "OPTIONS", 403},
		{"local web UI", "", "http://localhost:3000", "POST", 200},
		{"local web UI preflight", "", "http://127.0.0.1:5173", "OPTIONS", 204},
	}
	for _, c := range cases {
		hdr := map[string]string{"Content-Type": "application/json"}
		if c.origin != "" {
			hdr["Origin"] = c.origin
		}
		resp := do(t, c.method, chat, c.host, hdr, chatBody)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d", c.name, resp.StatusCode, c.status)
		}
		acao := resp.Header.Get("Access-Control-Allow-Origin")
		if acao == "*" || (c.status == 403 && acao != "") || (c.origin != "" && c.status != 403 && acao != c.origin) {
			t.Errorf("%s: Access-Control-Allow-Origin %q", c.name, acao)
		}
	}
	admitted, _, _, _ := f.snapshot()
	if want := 5; len(admitted) != want { // only the allowed POSTs reach the engine
		t.Fatalf("%d requests reached the engine, want %d", len(admitted), want)
	}
}

func TestAPIKey(t *testing.T) {
	f := newFakeEngine(8, "ok")
	_, ts := newTestServer(t, f, Options{APIKey: "s3cret"})
	for _, c := range []struct {
		path, auth string
		status     int
	}{
		{"/v1/models", "", 401},
		{"/v1/models", "Bearer wrong", 401},
		{"/v1/models", "s3cret", 401},
		{"/v1/models?api_key=s3cret", "", 401},
		{"/v1/models", "Bearer s3cret", 200},
		{"/v1/models", "bearer s3cret", 200}, // the scheme is case-insensitive
		{"/v1/models", "BEARER  s3cret ", 200},
		{"/v1/models", "Basic s3cret", 401},
		{"/v1/models", "Bearers3cret", 401},
		{"/health", "", 200},
	} {
		hdr := map[string]string{}
		if c.auth != "" {
			hdr["Authorization"] = c.auth
		}
		resp := do(t, "GET", ts.URL+c.path, "", hdr, "")
		if resp.StatusCode == 401 {
			if e := apiErr(t, resp); *e.Code != "invalid_api_key" {
				t.Errorf("401 code %v", e.Code)
			}
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s with %q: %d, want %d", c.path, c.auth, resp.StatusCode, c.status)
		}
	}
	resp := do(t, "POST", ts.URL+"/v1/chat/completions", "", map[string]string{"Authorization": "Bearer nope"}, chatBody)
	resp.Body.Close()
	if admitted, _, _, _ := f.snapshot(); resp.StatusCode != 401 || len(admitted) != 0 {
		t.Fatalf("unauthorized chat: %d, %d engine calls", resp.StatusCode, len(admitted))
	}
}

func TestListenAddrPolicy(t *testing.T) {
	for _, c := range []struct {
		addr, key string
		ok        bool
	}{
		{"127.0.0.1:8080", "", true}, {"localhost:0", "", true}, {"[::1]:8080", "", true},
		{"0.0.0.0:8080", "", false}, {":8080", "", false}, {"192.168.1.2:8080", "", false},
		{"0.0.0.0:8080", "k", true}, {"nonsense", "", false},
	} {
		if err := CheckListenAddr(c.addr, c.key); (err == nil) != c.ok {
			t.Errorf("CheckListenAddr(%q, %q) = %v", c.addr, c.key, err)
		}
	}
}

// TestListenAddrJudgesWhatANameResolvesTo: a *.localhost name is loopback
// only if it resolves there (the resolver is injected, as /etc/hosts or DNS
// would answer); refused without a key before anything listens, and
// otherwise the server listens on the loopback address that was checked.
func TestListenAddrJudgesWhatANameResolvesTo(t *testing.T) {
	lookup := func(ctx context.Context, host string) ([]string, error) {
		switch host {
		case "lan.localhost":
			return []string{"192.168.1.20"}, nil
		case "mixed.localhost":
			return []string{"127.0.0.1", "10.0.0.7"}, nil
		case "local.localhost":
			return []string{"::1", "127.0.0.1"}, nil
		}
		return nil, fmt.Errorf("no such host %s", host)
	}
	for _, c := range []struct {
		addr, key, want string // want "" = refused
	}{
		{"lan.localhost:0", "", ""},
		{"mixed.localhost:0", "", ""},
		{"nowhere.localhost:0", "", ""},
		{"local.localhost:0", "", "127.0.0.1:0"},
		{"lan.localhost:0", "k", "lan.localhost:0"},
		{"127.0.0.1:0", "", "127.0.0.1:0"},
	} {
		got, err := ListenAddr(c.addr, c.key, lookup)
		if (err == nil) != (c.want != "") || got != c.want {
			t.Errorf("ListenAddr(%q, %q) = %q, %v; want %q", c.addr, c.key, got, err, c.want)
		}
	}
	s := New(Options{Engine: newFakeEngine(1, "x"), Model: testModel, Lookup: lookup})
	if addr, err := s.Start("lan.localhost:0"); err == nil || !strings.Contains(err.Error(), "192.168.1.20") {
		t.Fatalf("Start on a name resolving beyond loopback: %v, %v", addr, err)
	}
	s.srvMu.Lock()
	listening := s.srv != nil
	s.srvMu.Unlock()
	if listening {
		t.Fatal("the refused server is serving")
	}
	addr, err := s.Start("local.localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	if ip := addr.(*net.TCPAddr).IP; !ip.Equal(net.IPv4(127, 0, 0, 1)) {
		t.Fatalf("listening on %v, want the checked 127.0.0.1", addr)
	}
}

// countingListener counts accepted connections.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// mediaServer serves a PNG on addr and counts connections.
func mediaServer(t *testing.T, addr string, h http.Handler) (*countingListener, string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s here: %v", addr, err)
	}
	cl := &countingListener{Listener: ln}
	srv := &http.Server{Handler: h}
	go srv.Serve(cl)
	t.Cleanup(func() { srv.Close() })
	return cl, ln.Addr().String()
}

func imageRequest(url string) string {
	return `{"messages":[{"role":"user","content":[{"type":"text","text":"describe"},{"type":"image_url","image_url":{"url":"` + url + `"}}]}]}`
}

// TestSSRFThroughFetchGuard sends image_url values at private targets
// through the real media fetch guard: every one is refused with a 400 and
// the listener behind the private address records zero connections.
func TestSSRFThroughFetchGuard(t *testing.T) {
	pngData := tinyPNG(t)
	servePNG := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(pngData) })
	private, addr := mediaServer(t, "127.0.0.1:0", servePNG)
	_, port, _ := net.SplitHostPort(addr)

	resolver := func(ctx context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "rebind.example": // a public-looking name that resolves to loopback
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		case "mixed.example":
			return []netip.Addr{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.0.0.7")}, nil
		}
		return nil, fmt.Errorf("no such host %s", host)
	}
	f := newFakeEngine(8, "ok")
	_, ts := newTestServer(t, f, Options{Fetcher: fetch.New(fetch.Options{Timeout: 3 * time.Second, Resolve: resolver})})
	for _, u := range []string{
		"http://127.0.0.1:" + port + "/a.png",
		"http://localhost:" + port + "/a.png",
		"http://2130706433:" + port + "/a.png",
		"http://0x7f000001:" + port + "/a.png",
		"http://[::ffff:127.0.0.1]:" + port + "/a.png",
		"http://rebind.example:" + port + "/a.png",
		"http://mixed.example:" + port + "/a.png",
		"http://169.254.169.254/latest/meta-data/",
		"http://10.0.0.1/a.png",
		"http://172.16.5.4/a.png",
		"http://192.168.1.1/a.png",
		"http://100.64.0.1/a.png",
		"http://[fd00::1]/a.png",
		"file:///etc/passwd",
		"gopher://127.0.0.1:" + port + "/",
	} {
		resp := post(t, ts.URL, imageRequest(u))
		e := apiErr(t, resp)
		if resp.StatusCode != 400 {
			t.Errorf("%s: status %d (%s)", u, resp.StatusCode, e.Message)
		}
		t.Logf("%-45s → %d %s", u, resp.StatusCode, e.Message)
	}
	if n := private.n.Load(); n != 0 {
		t.Fatalf("the private listener accepted %d connections", n)
	}

	// Redirects: the guard here admits 127.0.0.1 only (its test hook), so a
	// "public" server on 127.0.0.1 can redirect to other private targets.
	target, taddr := mediaServer(t, "127.0.0.2:0", servePNG)
	_, redirAddr := mediaServer(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-loopback2":
			http.Redirect(w, r, "http://"+taddr+"/a.png", http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/to-private":
			http.Redirect(w, r, "http://10.1.2.3/a.png", http.StatusMovedPermanently)
		case "/ok.png":
			w.Write(pngData)
		}
	}))
	f2 := newFakeEngine(8, "ok")
	_, ts2 := newTestServer(t, f2, Options{Fetcher: fetch.New(fetch.Options{Timeout: 3 * time.Second, AllowLoopback: true})})
	for _, p := range []string{"/to-loopback2", "/to-metadata", "/to-private"} {
		resp := post(t, ts2.URL, imageRequest("http://"+redirAddr+p))
		e := apiErr(t, resp)
		if resp.StatusCode != 400 {
			t.Errorf("redirect %s: status %d", p, resp.StatusCode)
		}
		t.Logf("redirect %-14s → %d %s", p, resp.StatusCode, e.Message)
	}
	if n := target.n.Load(); n != 0 {
		t.Fatalf("the redirect target on 127.0.0.2 accepted %d connections", n)
	}
	// The same path works for an allowed URL, so the refusals above are the policy's.
	resp := post(t, ts2.URL, imageRequest("http://"+redirAddr+"/ok.png"))
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("allowed image URL: %d", resp.StatusCode)
	}
	if got := f2.lastRequest().Messages[0].Content[1].Data; string(got) != string(pngData) {
		t.Fatal("fetched image bytes differ")
	}
}

var _ = httptest.NewServer
