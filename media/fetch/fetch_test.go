package fetch

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countingListener counts accepted connections, to prove none reach a blocked target.
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

func serve(t *testing.T, addr string, h http.Handler) (*httptest.Server, *countingListener) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	cl := &countingListener{Listener: ln}
	s := httptest.NewUnstartedServer(h)
	s.Listener = cl
	s.Start()
	t.Cleanup(s.Close)
	return s, cl
}

func pngBytes(t *testing.T) []byte {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func pngHandler(b []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(b) })
}

func TestCheckAddrTable(t *testing.T) {
	blocked := []string{
		"0.0.0.0", "0.255.255.255", "10.0.0.1", "10.255.255.255", "100.64.0.1", "100.127.255.255",
		"127.0.0.1", "127.255.255.254", "169.254.169.254", "172.16.0.1", "172.31.255.255",
		"192.0.0.8", "192.0.2.1", "192.88.99.1", "192.168.1.1", "198.18.0.1", "198.19.255.255",
		"198.51.100.7", "203.0.113.9", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
		"::", "::1", "::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:8.8.8.8", "::127.0.0.1",
		"64:ff9b::7f00:1", "64:ff9b::808:808", "64:ff9b:1::1", "2002:7f00:1::", "2002:808:808::1",
		"2001::1", "2001:db8::1", "fe80::1", "fe80::1%eth0", "fc00::1", "fd12:3456::1", "ff02::1",
		"100::1", "fec0::1", "3fff::1",
	}
	public := []string{
		"1.1.1.1", "8.8.8.8", "9.255.255.255", "11.0.0.1", "100.63.255.255", "100.128.0.0",
		"126.255.255.255", "128.0.0.1", "169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0",
		"192.0.3.1", "192.167.255.255", "192.169.0.0", "198.17.255.255", "198.20.0.0", "223.255.255.255",
		"2606:4700:4700::1111", "2a00:1450:4001:80b::200e", "2001:4860:4860::8888", "2003::1",
	}
	for _, s := range blocked {
		if err := CheckAddr(netip.MustParseAddr(s)); !errors.Is(err, ErrBlocked) {
			t.Errorf("%s: want blocked, got %v", s, err)
		}
	}
	for _, s := range public {
		if err := CheckAddr(netip.MustParseAddr(s)); err != nil {
			t.Errorf("%s: want public, got %v", s, err)
		}
	}
}

func TestDefaultPolicyNeverConnectsToLoopback(t *testing.T) {
	srv, ln := serve(t, "127.0.0.1:0", pngHandler(pngBytes(t)))
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	// The system resolver maps all of these to 127.0.0.1; the injected one does the same.
	toLoopback := func(ctx context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	g := New(Options{Resolve: toLoopback, Timeout: 5 * time.Second})
	for _, host := range []string{"127.0.0.1", "localhost", "LOCALHOST.", "a.localhost", "2130706433",
		"0x7f000001", "127.1", "0177.0.0.1", "rebind.example", "[::ffff:127.0.0.1]"} {
		_, err := g.Fetch(context.Background(), "http://"+host+":"+port+"/x.png", Image)
		if !errors.Is(err, ErrBlocked) {
			t.Errorf("%s: want ErrBlocked, got %v", host, err)
		}
	}
	if n := ln.n.Load(); n != 0 {
		t.Fatalf("blocked target accepted %d connections", n)
	}
}

func TestMixedAnswerIsRefused(t *testing.T) {
	_, ln := serve(t, "127.0.0.1:0", pngHandler(pngBytes(t)))
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	g := New(Options{Resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("127.0.0.1")}, nil
	}})
	_, err := g.Fetch(context.Background(), "http://mixed.example:"+port+"/", Image)
	if !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("want loopback ErrBlocked, got %v", err)
	}
	if ln.n.Load() != 0 {
		t.Fatal("blocked target was reached")
	}
}

// A rebinding resolver answers the allowed address first and a blocked one
// afterwards: the guard must look up once and dial what it checked.
func TestRebindingDialsTheCheckedAddress(t *testing.T) {
	good, goodLn := serve(t, "127.0.0.1:0", pngHandler(pngBytes(t)))
	_, port, _ := net.SplitHostPort(good.Listener.Addr().String())
	_, badLn := serve(t, "127.0.0.2:"+port, pngHandler(pngBytes(t)))
	var calls atomic.Int64
	g := New(Options{AllowLoopback: true, Resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
		if calls.Add(1) == 1 {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
	}})
	b, err := g.Fetch(context.Background(), "http://rebind.example:"+port+"/a.png", Image)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 || calls.Load() != 1 || goodLn.n.Load() != 1 || badLn.n.Load() != 0 {
		t.Fatalf("bytes %d, lookups %d, good accepts %d, bad accepts %d", len(b), calls.Load(), goodLn.n.Load(), badLn.n.Load())
	}
	// A second fetch gets the blocked answer and must not connect.
	if _, err := g.Fetch(context.Background(), "http://rebind.example:"+port+"/a.png", Image); !errors.Is(err, ErrBlocked) {
		t.Fatalf("want ErrBlocked, got %v", err)
	}
	if badLn.n.Load() != 0 {
		t.Fatal("blocked target was reached")
	}
}

func TestRedirects(t *testing.T) {
	_, blockedLn := serve(t, "127.0.0.2:0", pngHandler(pngBytes(t)))
	var hops atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/private", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+blockedLn.Addr().String()+"/x.png", http.StatusFound)
	})
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	mux.HandleFunc("/ftp", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://example.com/x.png", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		hops.Add(1)
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/nolocation", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusFound) })
	mux.HandleFunc("/two", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/one", http.StatusFound) })
	mux.HandleFunc("/one", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.Handle("/ok", pngHandler(pngBytes(t)))
	srv, _ := serve(t, "127.0.0.1:0", mux)
	g := New(Options{AllowLoopback: true})
	ctx := context.Background()

	if _, err := g.Fetch(ctx, srv.URL+"/two", Image); err != nil {
		t.Errorf("two redirects: %v", err)
	}
	if _, err := g.Fetch(ctx, srv.URL+"/private", Image); !errors.Is(err, ErrBlocked) {
		t.Errorf("redirect to private: want ErrBlocked, got %v", err)
	}
	for _, p := range []string{"/file", "/ftp"} {
		if _, err := g.Fetch(ctx, srv.URL+p, Image); !errors.Is(err, ErrURL) {
			t.Errorf("%s: want ErrURL, got %v", p, err)
		}
	}
	if _, err := g.Fetch(ctx, srv.URL+"/loop", Image); !errors.Is(err, ErrURL) || !strings.Contains(err.Error(), "redirects") {
		t.Errorf("loop: want redirect limit error, got %v", err)
	}
	if n := hops.Load(); n != 1+DefaultMaxRedirects {
		t.Errorf("loop: server saw %d requests, want %d", n, 1+DefaultMaxRedirects)
	}
	if _, err := g.Fetch(ctx, srv.URL+"/nolocation", Image); err == nil || !strings.Contains(err.Error(), "302") {
		t.Errorf("302 without Location: got %v", err)
	}
	if blockedLn.n.Load() != 0 {
		t.Fatal("blocked redirect target was reached")
	}
}

func TestSizeCaps(t *testing.T) {
	const limit = 1000
	big := append(pngBytes(t), make([]byte, 5000)...)
	mux := http.NewServeMux()
	mux.Handle("/length", pngHandler(big))
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 10; i++ {
			w.Write(big[i*500 : (i+1)*500])
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/404", http.NotFound)
	srv, _ := serve(t, "127.0.0.1:0", mux)
	g := New(Options{AllowLoopback: true, MaxBytes: limit})
	for _, p := range []string{"/length", "/chunked"} {
		if _, err := g.Fetch(context.Background(), srv.URL+p, Image); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: want ErrTooLarge, got %v", p, err)
		}
	}
	if _, err := g.Fetch(context.Background(), srv.URL+"/404", Image); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("404: got %v", err)
	}
}

func TestTotalTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	mux := http.NewServeMux()
	mux.HandleFunc("/slowbody", func(w http.ResponseWriter, r *http.Request) {
		w.Write(pngBytes(t)[:8])
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/slowheaders", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	srv, _ := serve(t, "127.0.0.1:0", mux)
	g := New(Options{AllowLoopback: true, Timeout: 300 * time.Millisecond})
	for _, p := range []string{"/slowbody", "/slowheaders"} {
		start := time.Now()
		_, err := g.Fetch(context.Background(), srv.URL+p, Image)
		if !errors.Is(err, ErrTimeout) {
			t.Errorf("%s: want ErrTimeout, got %v", p, err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: returned after %v", p, d)
		}
	}
}

func TestProxyEnvironmentIsIgnored(t *testing.T) {
	_, proxyLn := serve(t, "127.0.0.1:0", pngHandler(pngBytes(t)))
	t.Setenv("HTTP_PROXY", "http://"+proxyLn.Addr().String())
	t.Setenv("HTTPS_PROXY", "http://"+proxyLn.Addr().String())
	srv, ln := serve(t, "127.0.0.1:0", pngHandler(pngBytes(t)))
	if _, err := New(Options{AllowLoopback: true}).Fetch(context.Background(), srv.URL+"/a.png", Image); err != nil {
		t.Fatal(err)
	}
	if proxyLn.n.Load() != 0 || ln.n.Load() != 1 {
		t.Fatalf("proxy accepts %d, server accepts %d", proxyLn.n.Load(), ln.n.Load())
	}
}

func TestKindMustMatch(t *testing.T) {
	wav := "data:audio/wav;base64," + base64.StdEncoding.EncodeToString([]byte("RIFF\x24\x00\x00\x00WAVEfmt "))
	if _, err := New(Options{}).Fetch(context.Background(), wav, Image); err == nil || !strings.Contains(err.Error(), "expected image") {
		t.Fatalf("got %v", err)
	}
	webm := "data:audio/webm;base64," + base64.StdEncoding.EncodeToString([]byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01webm"))
	if _, err := New(Options{}).Fetch(context.Background(), webm, Audio); err != nil {
		t.Fatalf("audio in a webm container: %v", err)
	}
}

func TestDataURLs(t *testing.T) {
	p := pngBytes(t)
	b64 := base64.StdEncoding.EncodeToString(p)
	good := []string{
		"data:image/png;base64," + b64,
		"DATA:image/png;base64," + b64[:20] + "\n" + b64[20:],
		"data:;base64," + strings.TrimRight(base64.URLEncoding.EncodeToString(p), "="),
		"data:image/png;base64," + strings.ReplaceAll(b64, "+", "%2B"),
	}
	for i, s := range good {
		_, b, err := ParseDataURL(s, 1<<20)
		if err != nil || !bytes.Equal(b, p) {
			t.Errorf("good[%d]: err %v, equal %v", i, err, bytes.Equal(b, p))
		}
	}
	bad := map[string]error{
		"data:image/png;base64,":        ErrURL,
		"data:image/png;base64":         ErrURL,
		"data:image/png;base64,!!!!":    ErrURL,
		"data:image/png;base64,QUJD%zz": ErrURL,
		"http:/x":                       ErrURL,
		"data:image/png;base64," + b64:  ErrTooLarge, // checked with a 10-byte cap below
		"data:text/plain," + string(p):  ErrTooLarge,
	}
	for s, want := range bad {
		if _, _, err := ParseDataURL(s, 10); !errors.Is(err, want) {
			t.Errorf("%.40q: want %v, got %v", s, want, err)
		}
	}
	// A huge payload is refused from its length, before any decoding.
	huge := "data:video/mp4;base64," + strings.Repeat("A", 8<<20)
	var ms1, ms2 = allocs(), uint64(0)
	_, _, err := ParseDataURL(huge, 1<<20)
	ms2 = allocs()
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("want ErrTooLarge, got %v", err)
	}
	if ms2-ms1 > 1<<20 {
		t.Fatalf("refusing an 8 MiB payload allocated %d bytes", ms2-ms1)
	}
}

func TestSchemes(t *testing.T) {
	g := New(Options{})
	for _, u := range []string{"file:///etc/passwd", "/etc/passwd", "ftp://example.com/a.png", "gopher://x", "http://user:pw@example.com/a.png"} {
		if _, err := g.Fetch(context.Background(), u, Image); !errors.Is(err, ErrURL) {
			t.Errorf("%s: want ErrURL, got %v", u, err)
		}
	}
}

func ExampleGuard_Fetch() {
	g := New(Options{})
	_, err := g.Fetch(context.Background(), "http://169.254.169.254/latest/meta-data", Image)
	fmt.Println(err)
	// Output: blocked destination: 169.254.169.254 is a link-local (cloud metadata) address
}
