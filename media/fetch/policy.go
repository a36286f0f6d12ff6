package fetch

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// ErrBlocked marks a destination that is not a public internet address.
var ErrBlocked = errors.New("blocked destination")

// special lists the address blocks that must never be fetched from, with the
// reason shown to the user (IANA special-purpose registries, RFC 6890 et al.).
var special = []struct {
	prefix netip.Prefix
	why    string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\""},
	{netip.MustParsePrefix("10.0.0.0/8"), "private network"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT (shared address space)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (cloud metadata)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private network"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation (TEST-NET-1)"},
	{netip.MustParsePrefix("192.31.196.0/24"), "AS112"},
	{netip.MustParsePrefix("192.52.193.0/24"), "AMT"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay anycast"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private network"},
	{netip.MustParsePrefix("192.175.48.0/24"), "AS112"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation (TEST-NET-2)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation (TEST-NET-3)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved/broadcast"},

	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::ffff:0:0/96"), "IPv4-mapped"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible"},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64"},
	{netip.MustParsePrefix("100::/64"), "discard-only"},
	{netip.MustParsePrefix("2001::/32"), "Teredo"},
	{netip.MustParsePrefix("2001::/23"), "IETF protocol assignments"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("2002::/16"), "6to4"},
	{netip.MustParsePrefix("3fff::/20"), "documentation"},
	{netip.MustParsePrefix("5f00::/16"), "SRv6 SIDs"},
	{netip.MustParsePrefix("fc00::/7"), "unique local (private)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// CheckAddr returns nil when a is a public unicast address, else an error
// wrapping ErrBlocked that names the kind of address.
func CheckAddr(a netip.Addr) error {
	if !a.IsValid() {
		return fmt.Errorf("%w: invalid address", ErrBlocked)
	}
	a = a.WithZone("") // Prefix.Contains is false for zoned addresses
	for _, s := range special {
		if s.prefix.Contains(a) {
			return fmt.Errorf("%w: %s is a %s address", ErrBlocked, a, s.why)
		}
	}
	if a.Is6() && !globalUnicast6.Contains(a) {
		return fmt.Errorf("%w: %s is not a global unicast address", ErrBlocked, a)
	}
	return nil
}

// allowed applies CheckAddr, with the test-only loopback exception.
func (g *Guard) allowed(a netip.Addr) error {
	if g.opts.AllowLoopback && (a == netip.IPv6Loopback() || a == netip.AddrFrom4([4]byte{127, 0, 0, 1})) {
		return nil
	}
	return CheckAddr(a)
}

// checkHostName refuses names that mean "this machine" before any lookup.
func (g *Guard) checkHostName(host string) error {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if a, err := netip.ParseAddr(h); err == nil {
		return g.allowed(a)
	}
	if (h == "localhost" || strings.HasSuffix(h, ".localhost")) && !g.opts.AllowLoopback {
		return fmt.Errorf("%w: %q is this machine", ErrBlocked, host)
	}
	if h == "" {
		return fmt.Errorf("%w: empty host", ErrBlocked)
	}
	return nil
}
