package hub

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Errors callers can test with errors.Is.
var (
	ErrOffline    = errors.New("offline (HF_HUB_OFFLINE is set) and not in the cache")
	ErrNotCached  = errors.New("not in the Hugging Face cache")
	ErrNotFound   = errors.New("not found on the Hugging Face Hub")
	ErrAuth       = errors.New("the Hub refused access")
	ErrChecksum   = errors.New("download corrupted: checksum mismatch")
	ErrDiskFull   = errors.New("not enough disk space")
	ErrInProgress = errors.New("a download of this model is in progress")
)

// DefaultEndpoint is the Hub used when HF_ENDPOINT is unset.
const DefaultEndpoint = "https://huggingface.co"

// Hub reads and writes the standard Hugging Face cache and talks to the
// Hub's HTTP API. Fields may be changed before first use; the zero value
// is not usable, call New.
type Hub struct {
	Dir      string // the hub cache: $HF_HUB_CACHE, else $HF_HOME/hub
	Endpoint string // $HF_ENDPOINT, else https://huggingface.co
	Token    string // $HF_TOKEN, else the token file; sent only to Endpoint's host
	Offline  bool   // $HF_HUB_OFFLINE: never touch the network
	Client   *http.Client

	// IdleTimeout abandons a download whose body stalls this long.
	IdleTimeout time.Duration
	// MaxAttempts bounds tries per file (resuming each time); 1 means no retry.
	MaxAttempts int
	// DiskReserve is the space a pull must leave free.
	DiskReserve int64
	// DiskFree and Memory are seams for tests; nil uses the machine's.
	DiskFree func(dir string) (int64, error)
	Memory   func() (Budget, error)
	// Backend is the engine backend the fit check sizes for ("go" or
	// "mlx"; "": MLX on a Mac, the Go backend elsewhere).
	Backend string
}

// New returns a Hub configured from the environment, as huggingface_hub
// reads it: HF_HUB_CACHE, HF_HOME, HF_ENDPOINT, HF_TOKEN, HF_TOKEN_PATH,
// HF_HUB_OFFLINE.
func New() *Hub {
	home := os.Getenv("HF_HOME")
	if home == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			if h, err := os.UserHomeDir(); err == nil {
				base = filepath.Join(h, ".cache")
			}
		}
		home = filepath.Join(base, "huggingface")
	}
	dir := os.Getenv("HF_HUB_CACHE")
	if dir == "" {
		dir = os.Getenv("HUGGINGFACE_HUB_CACHE") // the older name
	}
	if dir == "" {
		dir = filepath.Join(home, "hub")
	}
	endpoint := strings.TrimRight(os.Getenv("HF_ENDPOINT"), "/")
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	return &Hub{
		Dir:         dir,
		Endpoint:    endpoint,
		Token:       readToken(home),
		Offline:     envTrue("HF_HUB_OFFLINE"),
		IdleTimeout: 60 * time.Second,
		MaxAttempts: 4,
		DiskReserve: 1 << 30,
	}
}

func readToken(home string) string {
	if t := strings.TrimSpace(os.Getenv("HF_TOKEN")); t != "" {
		return t
	}
	path := os.Getenv("HF_TOKEN_PATH")
	if path == "" {
		path = filepath.Join(home, "token")
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 4096 {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func envTrue(name string) bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(name))) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// Paths in the cache; every argument is a validated name.
func (h *Hub) repoDir(r Repo) string { return filepath.Join(h.Dir, r.cacheDirName()) }
func (h *Hub) blobPath(r Repo, blob string) string {
	return filepath.Join(h.repoDir(r), "blobs", blob)
}
func (h *Hub) snapshotDir(r Repo, commit string) string {
	return filepath.Join(h.repoDir(r), "snapshots", commit)
}
func (h *Hub) refPath(r Repo, rev string) string {
	return filepath.Join(h.repoDir(r), "refs", filepath.FromSlash(rev))
}
func (h *Hub) lockDir(r Repo) string { return filepath.Join(h.Dir, ".locks", r.cacheDirName()) }

func (h *Hub) client() *http.Client {
	if h.Client != nil {
		return h.Client
	}
	return defaultClient
}

var defaultClient = &http.Client{Transport: &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	ForceAttemptHTTP2:     true,
	TLSHandshakeTimeout:   15 * time.Second,
	ResponseHeaderTimeout: 60 * time.Second,
	MaxIdleConnsPerHost:   4,
	IdleConnTimeout:       90 * time.Second,
}}

func (h *Hub) diskFree(dir string) (int64, error) {
	if h.DiskFree != nil {
		return h.DiskFree(dir)
	}
	return diskFree(dir)
}

func (h *Hub) memory() (Budget, error) {
	if h.Memory != nil {
		return h.Memory()
	}
	return MachineBudget()
}
