// Package problem puts the failures a user can meet into words: no
// network, a full disk, a folder Perch may not write, a model too big for
// the machine, a download the Hub refuses. Each says what went wrong and
// what to do; the raw error is kept for a Details disclosure.
package problem

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"strings"
	"syscall"

	"perch/app/hub"
	"perch/ui"
)

// Kind is the sort of failure.
type Kind int

const (
	Other Kind = iota
	Network
	Offline // downloads turned off (HF_HUB_OFFLINE)
	DiskFull
	Permission
	Fit
	Auth
	NotFound
	Corrupt
)

// KindOf sorts err.
func KindOf(err error) Kind {
	var dns *net.DNSError
	var op *net.OpError
	var cert *tls.CertificateVerificationError
	switch {
	case err == nil:
		return Other
	case errors.Is(err, hub.ErrOffline):
		return Offline
	case errors.Is(err, hub.ErrDiskFull), errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return DiskFull
	case errors.Is(err, os.ErrPermission), errors.Is(err, syscall.EROFS):
		return Permission
	case errors.Is(err, hub.ErrDoesNotFit):
		return Fit
	case errors.Is(err, hub.ErrAuth):
		return Auth
	case errors.Is(err, hub.ErrNotFound):
		return NotFound
	case errors.Is(err, hub.ErrChecksum):
		return Corrupt
	case errors.As(err, &dns), errors.As(err, &op), errors.As(err, &cert),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ENETUNREACH),
		errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return Network
	}
	return Other
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// Explain turns err into a ui.Problem: a sentence for what went wrong, what
// to do about it ending in then ("press Resume", "try again"), and the raw
// error as Details. Nil stays nil.
func Explain(err error, then string) *ui.Problem {
	if err == nil {
		return nil
	}
	var p *ui.Problem
	if errors.As(err, &p) {
		return p // already in words
	}
	then = strings.TrimSuffix(then, ".")
	var summary string
	switch KindOf(err) {
	case Network:
		summary = "Perch could not reach Hugging Face: this computer seems to be offline. Check the connection, then " + then + "."
	case Offline:
		summary = "Downloads are turned off (HF_HUB_OFFLINE is set). Unset it, then " + then + "."
	case DiskFull:
		summary = "There is not enough free disk space. Free some (Details says how much is needed), then " + then + "."
	case Permission:
		summary = "Perch may not write to that folder. Choose another models folder in Settings, or give your user access to it, then " + then + "."
	case Fit:
		var fe *hub.FitError
		if errors.As(err, &fe) {
			summary = sentence(fe.Error())
		} else {
			summary = "This model needs more memory than this computer can give it. Choose a smaller one."
		}
	case Auth:
		summary = "Hugging Face refused the download: this model asks you to accept its license. Accept it on huggingface.co, set HF_TOKEN, then " + then + "."
	case NotFound:
		summary = "Hugging Face has no such model (or a file of it is missing). Check the name, or choose another model."
	case Corrupt:
		summary = "A downloaded file was damaged on the way. " + capital(then) + " to fetch it again."
	default:
		summary = "Something went wrong. " + capital(then) + "; if it keeps happening, Details says what."
	}
	return &ui.Problem{Summary: summary, Details: err.Error()}
}

func sentence(s string) string {
	s = capital(strings.TrimSpace(s))
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
