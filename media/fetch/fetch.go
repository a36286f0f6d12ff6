// Package fetch downloads media named by a URL for the chat API: data: URLs,
// and http(s) behind an SSRF guard that resolves the host, refuses every
// non-public address, dials the checked IP itself (no second lookup), re-checks
// every redirect and caps size and time.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"perch/media/sniff"
)

// Kind selects the size cap and the expected media kind.
type Kind = sniff.Kind

const (
	Image = sniff.Image
	Audio = sniff.Audio
	Video = sniff.Video
)

// Size caps per kind.
const (
	MaxImageAudioBytes = 64 << 20
	MaxVideoBytes      = 256 << 20
)

// Defaults for Options' zero values.
const (
	DefaultTimeout      = 60 * time.Second
	DefaultMaxRedirects = 5
)

var (
	ErrTooLarge = errors.New("media too large")
	ErrTimeout  = errors.New("media fetch timed out")
	ErrURL      = errors.New("bad media URL")
)

// Options configure a Guard. The zero value is the production policy.
type Options struct {
	Timeout      time.Duration // whole fetch: every hop and the body; 0 means DefaultTimeout
	MaxRedirects int           // 0 means DefaultMaxRedirects; negative follows none
	// AllowLoopback is a test hook: it admits 127.0.0.1 and ::1 (only those,
	// so tests can prove another loopback address is never reached). Off by default.
	AllowLoopback bool
	// MaxBytes, when > 0, replaces the per-kind caps (tests).
	MaxBytes int64
	// Resolve, when set, replaces DNS (tests inject rebinding resolvers).
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Guard fetches media under one policy; safe for concurrent use.
type Guard struct {
	opts   Options
	client *http.Client
}

// New returns a Guard with opts' policy.
func New(opts Options) *Guard {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxRedirects == 0 {
		opts.MaxRedirects = DefaultMaxRedirects
	}
	g := &Guard{opts: opts}
	dialer := &net.Dialer{Timeout: 30 * time.Second, Control: g.control}
	tr := &http.Transport{
		Proxy: nil, // a proxy would dial for us and skip the address check
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return g.dial(ctx, dialer, network, addr)
		},
		ForceAttemptHTTP2:      true,
		DisableKeepAlives:      true,
		TLSHandshakeTimeout:    15 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	g.client = &http.Client{Transport: tr, CheckRedirect: g.checkRedirect}
	return g
}

func (g *Guard) limit(kind Kind) int64 {
	if g.opts.MaxBytes > 0 {
		return g.opts.MaxBytes
	}
	if kind == Video {
		return MaxVideoBytes
	}
	return MaxImageAudioBytes
}

// Fetch returns the bytes rawURL names (a data: URL or http/https), at most
// kind's cap, after checking that they sniff as that kind of media.
func (g *Guard) Fetch(ctx context.Context, rawURL string, kind Kind) ([]byte, error) {
	rawURL = strings.TrimSpace(rawURL)
	limit := g.limit(kind)
	var data []byte
	if len(rawURL) >= 5 && strings.EqualFold(rawURL[:5], "data:") {
		_, b, err := ParseDataURL(rawURL, limit)
		if err != nil {
			return nil, err
		}
		data = b
	} else {
		b, err := g.fetchHTTP(ctx, rawURL, limit)
		if err != nil {
			return nil, err
		}
		data = b
	}
	t, err := sniff.Detect(data)
	if err != nil {
		return nil, err
	}
	// Audio may arrive in a video container (a browser's audio/webm recording).
	if t.Kind != kind && !(kind == Audio && t.Kind == Video) {
		return nil, fmt.Errorf("expected %s but the URL holds %s", kind, t)
	}
	return data, nil
}

func (g *Guard) checkURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w: only http, https and data URLs are allowed, not %q", ErrURL, u.Scheme+":")
	}
	if u.User != nil {
		return fmt.Errorf("%w: credentials in media URLs are not allowed", ErrURL)
	}
	return g.checkHostName(u.Hostname())
}

func (g *Guard) fetchHTTP(ctx context.Context, rawURL string, limit int64) ([]byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrURL, err)
	}
	if err := g.checkURL(u); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, g.opts.Timeout, ErrTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrURL, err)
	}
	req.Header.Set("User-Agent", "Perch")
	resp, err := g.client.Do(req)
	if err != nil {
		return nil, g.explain(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("fetching %s: HTTP %s", u.Redacted(), resp.Status)
	}
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("%w: %s says %d bytes, the limit is %d", ErrTooLarge, u.Host, resp.ContentLength, limit)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, g.explain(ctx, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: %s sent more than %d bytes", ErrTooLarge, u.Host, limit)
	}
	return b, nil
}

// explain turns transport errors into the guard's own, keeping the cause.
func (g *Guard) explain(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), ErrTimeout) {
		return fmt.Errorf("%w after %v", ErrTimeout, g.opts.Timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, ErrBlocked) || errors.Is(err, ErrURL) {
		return err
	}
	return fmt.Errorf("fetching media: %w", err)
}

func (g *Guard) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > g.opts.MaxRedirects || g.opts.MaxRedirects < 0 {
		return fmt.Errorf("%w: more than %d redirects", ErrURL, max(g.opts.MaxRedirects, 0))
	}
	return g.checkURL(req.URL)
}

// dial resolves host, refuses the lot if any address is not public, then dials
// the checked addresses in order.
func (g *Guard) dial(ctx context.Context, d *net.Dialer, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("%w: port %q", ErrURL, portStr)
	}
	addrs, err := g.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if err := g.allowed(a); err != nil {
			return nil, fmt.Errorf("%s: %w", host, err)
		}
	}
	var first error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

func (g *Guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	var addrs []netip.Addr
	var err error
	if g.opts.Resolve != nil {
		addrs, err = g.opts.Resolve(ctx, host)
	} else {
		addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	}
	if err != nil {
		return nil, fmt.Errorf("looking up %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("looking up %s: no addresses", host)
	}
	return addrs, nil
}

// control re-checks the literal address at connect time, so no dial path can
// reach a blocked address even if the checks above were bypassed.
func (g *Guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: unparsable dial address %q", ErrBlocked, address)
	}
	return g.allowed(ap.Addr())
}
