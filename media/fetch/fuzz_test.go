package fetch

import (
	"errors"
	"net/netip"
	"testing"
)

func FuzzDataURL(f *testing.F) {
	for _, s := range []string{"data:image/png;base64,iVBORw0KGgo=", "data:,hello%20world", "data:;base64,", "data:a;b;base64,QUJD",
		"data:image/png;base64,QU JD\n", "data:x,%zz", "data:;base64,QUJD_-", "data:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		const limit = 4096
		_, b, err := ParseDataURL(s, limit)
		if err == nil && (len(b) == 0 || len(b) > limit) {
			t.Fatalf("accepted %d bytes (limit %d)", len(b), limit)
		}
		if err != nil && !errors.Is(err, ErrURL) && !errors.Is(err, ErrTooLarge) {
			t.Fatalf("untyped error %v", err)
		}
	})
}

// FuzzDestinationPolicy checks the policy against a simpler oracle: any
// address that the standard library calls loopback, private, link-local,
// multicast or unspecified, or any IPv6 address outside 2000::/3, is blocked.
func FuzzDestinationPolicy(f *testing.F) {
	f.Add([]byte{127, 0, 0, 1})
	f.Add([]byte{8, 8, 8, 8})
	f.Add(netip.MustParseAddr("64:ff9b::7f00:1").AsSlice())
	f.Add(netip.MustParseAddr("2606:4700::1").AsSlice())
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, ok := netip.AddrFromSlice(raw)
		if !ok {
			return
		}
		err := CheckAddr(a)
		mustBlock := a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
			a.IsMulticast() || a.IsUnspecified() || a.Is4In6() || (a.Is6() && !globalUnicast6.Contains(a))
		if mustBlock && err == nil {
			t.Fatalf("%s allowed", a)
		}
		if err != nil && !errors.Is(err, ErrBlocked) {
			t.Fatalf("untyped error %v", err)
		}
	})
}
