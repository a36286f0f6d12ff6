package fetch

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
)

// ParseDataURL decodes an RFC 2397 data: URL (base64 or percent-encoded),
// refusing payloads over maxBytes before decoding them.
func ParseDataURL(s string, maxBytes int64) (mediaType string, data []byte, err error) {
	if len(s) < 5 || !strings.EqualFold(s[:5], "data:") {
		return "", nil, fmt.Errorf("%w: not a data: URL", ErrURL)
	}
	head, payload, ok := strings.Cut(s[5:], ",")
	if !ok {
		return "", nil, fmt.Errorf("%w: data: URL has no comma before its payload", ErrURL)
	}
	params := strings.Split(head, ";")
	mediaType = strings.TrimSpace(params[0])
	isBase64 := false
	for _, p := range params[1:] {
		if strings.EqualFold(strings.TrimSpace(p), "base64") {
			isBase64 = true
		}
	}
	if len(payload) == 0 {
		return "", nil, fmt.Errorf("%w: data: URL is empty", ErrURL)
	}
	// Bound the decoded size from the encoded length before allocating anything.
	est := int64(len(payload))
	if isBase64 {
		est = est / 4 * 3
	} else {
		est /= 3 // each byte takes 1 to 3 characters
	}
	if est > maxBytes {
		return "", nil, fmt.Errorf("%w: data: URL holds about %d bytes, the limit is %d", ErrTooLarge, est, maxBytes)
	}
	if strings.Contains(payload, "%") {
		if payload, err = url.PathUnescape(payload); err != nil {
			return "", nil, fmt.Errorf("%w: data: URL: %v", ErrURL, err)
		}
	}
	if !isBase64 {
		data = []byte(payload)
	} else {
		payload = strings.Map(func(r rune) rune {
			if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
				return -1
			}
			return r
		}, payload)
		data, err = decodeBase64(payload)
		if err != nil {
			return "", nil, fmt.Errorf("%w: data: URL payload is not valid base64: %v", ErrURL, err)
		}
	}
	if int64(len(data)) > maxBytes {
		return "", nil, fmt.Errorf("%w: data: URL holds %d bytes, the limit is %d", ErrTooLarge, len(data), maxBytes)
	}
	if len(data) == 0 {
		return "", nil, fmt.Errorf("%w: data: URL is empty", ErrURL)
	}
	return mediaType, data, nil
}

// decodeBase64 accepts the standard and URL-safe alphabets, padded or not.
func decodeBase64(s string) ([]byte, error) {
	enc := base64.StdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.URLEncoding
	}
	if len(s)%4 != 0 {
		enc = enc.WithPadding(base64.NoPadding)
		s = strings.TrimRight(s, "=")
	}
	return enc.DecodeString(s)
}
