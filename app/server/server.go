package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"perch/engine"
	"perch/media/fetch"
)

// ModelInfo describes the loaded model for /v1/models and for refusing
// media the model cannot take.
type ModelInfo struct {
	ID string // what clients send as "model" and see in answers
	// Base is the base model's id when ID is "<Base>+<adapter>", an
	// adapter the engine applies to every request (perch serve
	// --adapter); the Adapters are offered as "<Base>+<name>" ("": ID).
	Base          string
	Created       time.Time
	Vision        bool
	Audio         bool
	Video         bool
	ContextLength int
}

// MediaFetcher turns an image_url/audio_url/video_url into bytes;
// *fetch.Guard is the production one (data: URLs and SSRF-guarded http(s)).
type MediaFetcher interface {
	Fetch(ctx context.Context, rawURL string, kind fetch.Kind) ([]byte, error)
}

// Options configure a Server.
type Options struct {
	Engine engine.Generator // may be nil until SetModel
	Model  ModelInfo
	// Fetcher fetches media URLs; nil means fetch.New(fetch.Options{}).
	Fetcher MediaFetcher
	// APIKey, when set, is required as "Authorization: Bearer <key>" on
	// every route except /health.
	APIKey string
	// AllowedHosts and AllowedOrigins extend the loopback defaults (exact
	// host names; origins as "scheme://host[:port]").
	AllowedHosts   []string
	AllowedOrigins []string
	// MaxBodyBytes caps a request body; 0 means DefaultMaxBody.
	MaxBodyBytes int64
	// RetryAfter is sent with 429 answers; 0 means one second.
	RetryAfter time.Duration
	// Logf logs one line per request outcome; nil is quiet.
	Logf func(format string, args ...any)
	// Lookup resolves the listen address's host name (nil: the system's).
	Lookup Lookup
	// Preparing bounds the chat requests between arrival and the engine's
	// queue (body read, media fetched, prompt prepared); one more is
	// answered 429 at once, before its body is read (default 2).
	Preparing int
	// Adapters, when set, is read at each request: the loaded model's LoRA
	// adapters, offered as "<model>+<name>", and the name of the one that
	// answers requests naming no model ("" none).
	Adapters func() (list []AdapterModel, def string)
}

// DefaultMaxBody caps request bodies (inline media included).
const DefaultMaxBody = 64 << 20

// DefaultAddr is where `perch serve` listens unless told otherwise.
const DefaultAddr = "127.0.0.1:8080"

// Server is an OpenAI-compatible HTTP API in front of one engine.
type Server struct {
	opts    Options
	fetcher MediaFetcher
	mux     *http.ServeMux

	mu    sync.RWMutex
	gen   engine.Generator
	model ModelInfo
	lan   bool // listening beyond loopback: IP-literal hosts allowed too

	srvMu sync.Mutex
	srv   *http.Server

	preparing chan struct{} // a slot per chat request not yet queued
}

// New returns a Server; it does not listen until Serve or Start.
func New(opts Options) *Server {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBody
	}
	if opts.RetryAfter <= 0 {
		opts.RetryAfter = time.Second
	}
	if opts.Preparing <= 0 {
		opts.Preparing = 2
	}
	s := &Server{opts: opts, fetcher: opts.Fetcher, gen: opts.Engine, model: opts.Model,
		preparing: make(chan struct{}, opts.Preparing)}
	if s.fetcher == nil {
		s.fetcher = fetch.New(fetch.Options{})
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /health", s.handleHealth)
	s.mux.HandleFunc("GET /v1/models", s.handleModels)
	s.mux.HandleFunc("GET /v1/models/{id...}", s.handleModel)
	s.mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "invalid_request_error", "", "unknown_url",
			fmt.Sprintf("no route for %s %s; this server offers GET /v1/models and POST /v1/chat/completions", r.Method, r.URL.Path))
	})
	return s
}

// SetModel swaps the engine and model the server answers with (the GUI
// calls it when the user switches models); nil gen answers 503.
func (s *Server) SetModel(gen engine.Generator, m ModelInfo) {
	s.mu.Lock()
	s.gen, s.model = gen, m
	s.mu.Unlock()
}

func (s *Server) current() (engine.Generator, ModelInfo) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.gen, s.model
}

// Handler is the whole API with its guards: Host and Origin checks (DNS
// rebinding and cross-site requests), the optional bearer key, CORS for
// allowed origins only, and the body limit.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostAllowed(r.Host) {
			s.logf("refused Host %q from %s", truncate(r.Host, 80), r.RemoteAddr)
			writeError(w, http.StatusForbidden, "invalid_request_error", "", "host_not_allowed",
				"this server answers only requests addressed to localhost (DNS rebinding protection)")
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			if !s.originAllowed(origin) {
				s.logf("refused Origin %q from %s", truncate(origin, 80), r.RemoteAddr)
				writeError(w, http.StatusForbidden, "invalid_request_error", "", "origin_not_allowed",
					"requests from this web page's origin are not allowed")
				return
			}
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
			h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
			if r.Method == http.MethodOptions {
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		if s.opts.APIKey != "" && r.URL.Path != "/health" && !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="perch"`)
			writeError(w, http.StatusUnauthorized, "invalid_request_error", "", "invalid_api_key",
				"missing or wrong API key: send Authorization: Bearer <key>")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
		s.mux.ServeHTTP(w, r)
	})
}

// authorized checks "Authorization: Bearer KEY"; the scheme is
// case-insensitive (RFC 9110 §11.1), so "bearer KEY" counts too.
func (s *Server) authorized(r *http.Request) bool {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	return ok && strings.EqualFold(scheme, "Bearer") &&
		subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(s.opts.APIKey)) == 1
}

// hostAllowed accepts loopback names and addresses, the configured extra
// hosts, and when serving beyond loopback any IP literal, this machine's
// name and *.local. A browser tricked by DNS rebinding sends the
// attacker's name and is refused.
func (s *Server) hostAllowed(hostport string) bool {
	if hostport == "" {
		return true // HTTP/1.0 without Host: not a browser
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if isLoopbackName(host) {
		return true
	}
	for _, h := range s.opts.AllowedHosts {
		if strings.EqualFold(h, host) {
			return true
		}
	}
	s.mu.RLock()
	lan := s.lan
	s.mu.RUnlock()
	if lan {
		if net.ParseIP(host) != nil || strings.HasSuffix(host, ".local") {
			return true
		}
		if name, err := os.Hostname(); err == nil && strings.EqualFold(name, host) {
			return true
		}
	}
	return false
}

func isLoopbackName(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// originAllowed accepts pages served from loopback (a local web UI) and
// the configured origins; "null" (file://, sandboxed frames) is refused.
func (s *Server) originAllowed(origin string) bool {
	for _, o := range s.opts.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return isLoopbackName(strings.ToLower(u.Hostname()))
}

// Lookup resolves a host name to its addresses, as
// net.DefaultResolver.LookupHost does (tests inject their own).
type Lookup func(ctx context.Context, host string) ([]string, error)

// ListenAddr says where addr would listen and refuses anything beyond
// loopback without an API key. A name is judged by what it resolves to,
// not by its spelling (lan.localhost may resolve anywhere through
// /etc/hosts or DNS). It returns the address to listen on: without a key
// the host resolved to the loopback IP literal that was checked, so the
// listener cannot land elsewhere. lookup nil is the system resolver.
func ListenAddr(addr, apiKey string, lookup Lookup) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("listen address %q: %v (want host:port, e.g. %s)", addr, err, DefaultAddr)
	}
	if apiKey != "" {
		return addr, nil
	}
	beyond := fmt.Errorf("listening on %q reaches beyond this machine; set an API key (--api-key or PERCH_API_KEY) first", addr)
	if host == "" {
		return "", beyond // every interface
	}
	ips := []string{strings.Trim(host, "[]")}
	if net.ParseIP(ips[0]) == nil {
		if lookup == nil {
			lookup = net.DefaultResolver.LookupHost
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if ips, err = lookup(ctx, host); err != nil || len(ips) == 0 {
			return "", fmt.Errorf("listen address %q: the name does not resolve (%v)", addr, err)
		}
	}
	pick := ""
	for _, a := range ips {
		ip := net.ParseIP(a)
		if ip == nil || !ip.IsLoopback() {
			if net.ParseIP(host) == nil {
				return "", fmt.Errorf("%w (%s resolves to %s)", beyond, host, a)
			}
			return "", beyond
		}
		if pick == "" || (ip.To4() != nil && net.ParseIP(pick).To4() == nil) {
			pick = a // IPv4 first, as net.Listen would
		}
	}
	return net.JoinHostPort(pick, port), nil
}

// CheckListenAddr is ListenAddr with the system resolver, for its verdict.
func CheckListenAddr(addr, apiKey string) error {
	_, err := ListenAddr(addr, apiKey, nil)
	return err
}

// Start listens on addr (see ListenAddr, with Options.Lookup) and serves in
// the background; it returns the bound address (useful with port 0).
func (s *Server) Start(addr string) (net.Addr, error) {
	at, err := ListenAddr(addr, s.opts.APIKey, s.opts.Lookup)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", at)
	if err != nil {
		return nil, err
	}
	go s.Serve(ln)
	return ln.Addr(), nil
}

// Serve answers on ln until Shutdown; it returns nil after Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		s.mu.Lock()
		s.lan = true
		s.mu.Unlock()
	}
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       5 * time.Minute, // cleared once the body is read, so streams are not cut
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	s.srvMu.Lock()
	s.srv = srv
	s.srvMu.Unlock()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops accepting and waits for requests in flight until ctx
// ends, then closes their connections (which cancels their generations).
func (s *Server) Shutdown(ctx context.Context) error {
	s.srvMu.Lock()
	srv := s.srv
	s.srvMu.Unlock()
	if srv == nil {
		return nil
	}
	err := srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return srv.Close()
	}
	return err
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}
