package hub

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeHub is a loopback Hugging Face: the revision API, resolve URLs that
// serve small files directly and redirect LFS files to a separate "CDN"
// host, with Range support and fault hooks.
type fakeHub struct {
	t      *testing.T
	hub    *httptest.Server
	cdn    *httptest.Server
	commit string
	files  map[string][]byte
	lfs    map[string]bool
	// listingJSON, when set, replaces the generated listing.
	listingJSON string

	mu          sync.Mutex
	requests    []fakeRequest
	dropAfter   map[string]int // path → bytes to send before cutting the connection (once)
	corrupt     map[string]int // path → offset of a flipped byte (every time)
	ignoreRange bool
	stall       map[string]int // path → bytes to send before hanging (once)
	release     chan struct{}
}

type fakeRequest struct {
	Host, Path, Range, Auth string
}

func newFakeHub(t *testing.T, files map[string][]byte, lfs ...string) *fakeHub {
	f := &fakeHub{t: t, files: files, lfs: map[string]bool{}, dropAfter: map[string]int{},
		corrupt: map[string]int{}, stall: map[string]int{}, release: make(chan struct{}),
		commit: strings.Repeat("ab12", 10)}
	for _, p := range lfs {
		f.lfs[p] = true
	}
	f.cdn = httptest.NewServer(http.HandlerFunc(f.serveCDN))
	f.hub = httptest.NewServer(http.HandlerFunc(f.serveHub))
	t.Cleanup(func() {
		close(f.release)
		f.hub.Close()
		f.cdn.Close()
	})
	return f
}

func (f *fakeHub) record(r *http.Request, host string) {
	f.mu.Lock()
	f.requests = append(f.requests, fakeRequest{host, r.URL.Path, r.Header.Get("Range"), r.Header.Get("Authorization")})
	f.mu.Unlock()
}

func (f *fakeHub) reqs() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRequest(nil), f.requests...)
}

// count is the number of requests whose path contains s.
func (f *fakeHub) count(s string) int {
	n := 0
	for _, r := range f.reqs() {
		if strings.Contains(r.Path, s) {
			n++
		}
	}
	return n
}

func gitSHA1(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

func sha256hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// blob is the cache blob name of a file.
func (f *fakeHub) blob(path string) string {
	if f.lfs[path] {
		return sha256hex(f.files[path])
	}
	return gitSHA1(f.files[path])
}

func (f *fakeHub) listing() string {
	if f.listingJSON != "" {
		return f.listingJSON
	}
	type lfs struct {
		SHA256      string `json:"sha256"`
		Size        int    `json:"size"`
		PointerSize int    `json:"pointerSize"`
	}
	type sib struct {
		RFilename string `json:"rfilename"`
		BlobID    string `json:"blobId"`
		Size      int    `json:"size"`
		LFS       *lfs   `json:"lfs,omitempty"`
	}
	var sibs []sib
	for p, b := range f.files {
		s := sib{RFilename: p, BlobID: gitSHA1(b), Size: len(b)}
		if f.lfs[p] {
			s.BlobID = strings.Repeat("0", 40) // the pointer file's id
			s.Size = 134
			s.LFS = &lfs{SHA256: sha256hex(b), Size: len(b), PointerSize: 134}
		}
		sibs = append(sibs, s)
	}
	b, _ := json.Marshal(map[string]any{"id": "org/model", "sha": f.commit, "siblings": sibs})
	return string(b)
}

func (f *fakeHub) serveHub(w http.ResponseWriter, r *http.Request) {
	f.record(r, "hub")
	if strings.HasPrefix(r.URL.Path, "/api/models/") {
		if !strings.Contains(r.URL.Path, "/revision/") || r.URL.Query().Get("blobs") != "true" {
			http.Error(w, "bad listing request", 400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, f.listing())
		return
	}
	// /{org}/{name}/resolve/{rev}/{path...}
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 5)
	if len(parts) < 5 || parts[2] != "resolve" {
		w.Header().Set("X-Error-Code", "EntryNotFound")
		http.NotFound(w, r)
		return
	}
	path := parts[4]
	if _, ok := f.files[path]; !ok {
		w.Header().Set("X-Error-Code", "EntryNotFound")
		http.NotFound(w, r)
		return
	}
	if f.lfs[path] {
		http.Redirect(w, r, f.cdn.URL+"/blob/"+path, http.StatusFound)
		return
	}
	f.serveBytes(w, r, path)
}

func (f *fakeHub) serveCDN(w http.ResponseWriter, r *http.Request) {
	f.record(r, "cdn")
	if r.Header.Get("Authorization") != "" {
		http.Error(w, "presigned URL: Authorization not allowed", 400)
		return
	}
	f.serveBytes(w, r, strings.TrimPrefix(r.URL.Path, "/blob/"))
}

func (f *fakeHub) serveBytes(w http.ResponseWriter, r *http.Request, path string) {
	data := append([]byte(nil), f.files[path]...)
	f.mu.Lock()
	if off, ok := f.corrupt[path]; ok {
		data[off] ^= 0x5a
	}
	drop, dropping := f.dropAfter[path]
	delete(f.dropAfter, path)
	stall, stalling := f.stall[path]
	delete(f.stall, path)
	ignore := f.ignoreRange
	f.mu.Unlock()

	start := 0
	if rg := r.Header.Get("Range"); rg != "" && !ignore {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-"))
		if err != nil || n >= len(data) {
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
			return
		}
		start = n
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", n, len(data)-1, len(data)))
		w.Header().Set("Content-Length", strconv.Itoa(len(data)-n))
		w.WriteHeader(http.StatusPartialContent)
	} else {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.WriteHeader(http.StatusOK)
	}
	body := data[start:]
	switch {
	case dropping:
		w.Write(body[:min(drop, len(body))])
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	case stalling:
		w.Write(body[:min(stall, len(body))])
		w.(http.Flusher).Flush()
		<-f.release
	default:
		w.Write(body)
	}
}
