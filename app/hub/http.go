package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

const (
	maxRedirects = 10
	userAgent    = "perch/0 (+hub)"
)

// get issues a GET, following redirects itself so the token goes only to
// the Hub's own host: presigned CDN URLs reject (and must never see) it.
func (h *Hub) get(ctx context.Context, rawURL string, offset int64) (*http.Response, error) {
	base, err := url.Parse(h.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("HF_ENDPOINT %q: %v", h.Endpoint, err)
	}
	c := *h.client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for hop := 0; hop <= maxRedirects; hop++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("User-Agent", userAgent)
		req.Header.Set("Accept-Encoding", "identity") // byte offsets must be the file's
		if offset > 0 {
			req.Header.Set("Range", fmt.Sprintf("bytes=%d-", offset))
		}
		if h.Token != "" && strings.EqualFold(req.URL.Host, base.Host) && req.URL.Scheme == base.Scheme {
			req.Header.Set("Authorization", "Bearer "+h.Token)
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, transient(err)
		}
		switch resp.StatusCode {
		case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
			http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		default:
			return resp, nil
		}
		loc := resp.Header.Get("Location")
		drain(resp)
		next, err := req.URL.Parse(loc)
		if err != nil || loc == "" {
			return nil, fmt.Errorf("the Hub sent a bad redirect %q", truncate(loc, 100))
		}
		if next.Scheme != "https" && !(next.Scheme == "http" && base.Scheme == "http") {
			return nil, fmt.Errorf("the Hub redirected to a %q URL; only https is followed", next.Scheme)
		}
		rawURL = next.String()
	}
	return nil, fmt.Errorf("more than %d redirects", maxRedirects)
}

// statusError turns a non-2xx answer into an error that says what to do.
func (h *Hub) statusError(resp *http.Response, what string) error {
	code := resp.Header.Get("X-Error-Code")
	drain(resp)
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		hint := "the repo may be gated or private: accept its terms on the Hub and set HF_TOKEN"
		if h.Token != "" {
			hint = "the token in HF_TOKEN may lack access to this repo (gated repos need their terms accepted), or the repo does not exist"
		}
		return fmt.Errorf("%s: %w (HTTP %d): %s", what, ErrAuth, resp.StatusCode, hint)
	case resp.StatusCode == http.StatusNotFound:
		if code != "" {
			return fmt.Errorf("%s: %w (%s)", what, ErrNotFound, code)
		}
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return transient(fmt.Errorf("%s: the Hub answered HTTP %d", what, resp.StatusCode))
	}
	return fmt.Errorf("%s: the Hub answered HTTP %d", what, resp.StatusCode)
}

func drain(resp *http.Response) {
	io.CopyN(io.Discard, resp.Body, 64<<10)
	resp.Body.Close()
}

// transientError marks a failure worth retrying (and resuming).
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

func transient(err error) error { return &transientError{err} }

func isTransient(err error) bool {
	var t *transientError
	return errors.As(err, &t)
}
