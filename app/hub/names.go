package hub

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrUnsafeName marks a name from the network or the user (repo id,
// revision, file name, hash) that may not be used to build a path.
var ErrUnsafeName = errors.New("unsafe name")

// Limits on names, so a hostile listing cannot build absurd paths.
const (
	maxRepoPart    = 96
	maxRelPath     = 1024
	maxPathSegment = 255
	maxRevision    = 256
)

// Repo is a parsed Hugging Face model repo id ("org/name" or "name").
// The only way to get one is ParseRepo, so every Repo is safe in a path.
type Repo struct{ org, name string }

// ParseRepo validates a repo id the way the Hub does: one or two parts of
// letters, digits, '-', '_' and '.', no "--" or "..", at most 96 bytes each.
func ParseRepo(id string) (Repo, error) {
	parts := strings.Split(id, "/")
	if len(parts) > 2 {
		return Repo{}, fmt.Errorf("%w: repo id %q: want org/name", ErrUnsafeName, id)
	}
	for _, p := range parts {
		if err := checkRepoPart(p); err != nil {
			return Repo{}, fmt.Errorf("%w: repo id %q: %v", ErrUnsafeName, id, err)
		}
	}
	if len(parts) == 1 {
		return Repo{name: parts[0]}, nil
	}
	return Repo{org: parts[0], name: parts[1]}, nil
}

func checkRepoPart(p string) error {
	switch {
	case p == "":
		return errors.New("empty part")
	case len(p) > maxRepoPart:
		return fmt.Errorf("part longer than %d bytes", maxRepoPart)
	case strings.Contains(p, "--") || strings.Contains(p, ".."):
		return errors.New(`"--" and ".." are not allowed`)
	case p[0] == '.' || p[0] == '-' || p[len(p)-1] == '.' || p[len(p)-1] == '-':
		return errors.New("must start and end with a letter or digit")
	}
	for _, c := range []byte(p) {
		if !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return fmt.Errorf("character %q not allowed", c)
		}
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// String is the repo id as the Hub spells it.
func (r Repo) String() string {
	if r.org == "" {
		return r.name
	}
	return r.org + "/" + r.name
}

// IsZero reports whether r is the zero Repo.
func (r Repo) IsZero() bool { return r.name == "" }

// cacheDirName is the folder name in the HF cache: models--org--name.
func (r Repo) cacheDirName() string {
	if r.org == "" {
		return "models--" + r.name
	}
	return "models--" + r.org + "--" + r.name
}

// repoFromCacheDir inverts cacheDirName; ok is false for other folders.
func repoFromCacheDir(dir string) (Repo, bool) {
	rest, ok := strings.CutPrefix(dir, "models--")
	if !ok {
		return Repo{}, false
	}
	r, err := ParseRepo(strings.Replace(rest, "--", "/", 1))
	return r, err == nil
}

// ParseRef splits "org/name@rev" into a repo and a revision ("main" when
// absent), both validated.
func ParseRef(ref string) (Repo, string, error) {
	id, rev, hasRev := strings.Cut(ref, "@")
	if !hasRev {
		rev = "main"
	}
	r, err := ParseRepo(id)
	if err != nil {
		return Repo{}, "", err
	}
	if err := CheckRevision(rev); err != nil {
		return Repo{}, "", err
	}
	return r, rev, nil
}

// CheckRevision accepts a branch, tag or commit name that is safe to use
// as a path under refs/ (segments of [A-Za-z0-9._-], none "." or "..").
func CheckRevision(rev string) error {
	if rev == "" || len(rev) > maxRevision {
		return fmt.Errorf("%w: revision %q: want 1 to %d bytes", ErrUnsafeName, rev, maxRevision)
	}
	for _, seg := range strings.Split(rev, "/") {
		if seg == "" || seg == "." || seg == ".." || seg[0] == '.' {
			return fmt.Errorf("%w: revision %q: bad segment %q", ErrUnsafeName, rev, seg)
		}
		for _, c := range []byte(seg) {
			if !isAlnum(c) && c != '-' && c != '_' && c != '.' {
				return fmt.Errorf("%w: revision %q: character %q not allowed", ErrUnsafeName, rev, c)
			}
		}
	}
	return nil
}

// CheckRelPath accepts a file name from the network (a listing's rfilename,
// an index's weight_map value) only as a clean relative slash path: no
// leading '/', no backslash, NUL or control character, no empty, "." or ".."
// segment, valid UTF-8, bounded length.
func CheckRelPath(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: file name %q: %s", ErrUnsafeName, truncate(name, 80), why)
	}
	switch {
	case name == "":
		return bad("empty")
	case len(name) > maxRelPath:
		return bad(fmt.Sprintf("longer than %d bytes", maxRelPath))
	case !utf8.ValidString(name):
		return bad("not UTF-8")
	case name[0] == '/':
		return bad("absolute")
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || r == '\\' || r == ':' {
			return bad(fmt.Sprintf("character %q not allowed", r))
		}
	}
	for _, seg := range strings.Split(name, "/") {
		switch {
		case seg == "" || seg == "." || seg == "..":
			return bad(fmt.Sprintf("bad segment %q", seg))
		case len(seg) > maxPathSegment:
			return bad("segment too long")
		}
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// isHex reports whether s is exactly n lowercase hex digits.
func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
