package problem

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"perch/app/hub"
	"perch/ui"
)

func TestEveryFailureSaysWhatToDoAndKeepsTheRawError(t *testing.T) {
	// A real offline failure: nothing listens on the port.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	_, refused := http.Get("http://" + addr + "/x")
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	_, dnsErr := net.DefaultResolver.LookupHost(ctx, "huggingface.co")
	for _, c := range []struct {
		err  error
		kind Kind
		says string
	}{
		{refused, Network, "offline"},
		{fmt.Errorf("pull: %w", dnsErr), Network, "offline"},
		{fmt.Errorf("x: %w", hub.ErrOffline), Offline, "HF_HUB_OFFLINE"},
		{fmt.Errorf("write: %w", syscall.ENOSPC), DiskFull, "disk space"},
		{fmt.Errorf("%w: need 3 GB", hub.ErrDiskFull), DiskFull, "disk space"},
		{&os.PathError{Op: "open", Path: "/models/x", Err: os.ErrPermission}, Permission, "Settings"},
		{fmt.Errorf("pull: %w", hub.ErrDoesNotFit), Fit, "more memory"},
		{fmt.Errorf("repo: %w", hub.ErrAuth), Auth, "license"},
		{fmt.Errorf("repo: %w", hub.ErrNotFound), NotFound, "no such model"},
		{errors.New("strange"), Other, "Details"},
	} {
		if c.err == nil {
			t.Fatalf("no error for %v", c.kind)
		}
		if k := KindOf(c.err); k != c.kind {
			t.Errorf("%v: kind %d, want %d", c.err, k, c.kind)
		}
		p := Explain(c.err, "press Resume")
		if p.Details != c.err.Error() || !strings.Contains(p.Summary, c.says) || strings.Contains(p.Summary, c.err.Error()) && c.kind != Fit {
			t.Errorf("%v: %+v", c.err, p)
		}
	}
	if Explain(nil, "x") != nil {
		t.Fatal("nil became a problem")
	}
	p := &ui.Problem{Summary: "s", Details: "d"}
	if Explain(fmt.Errorf("wrapped: %w", p), "x") != p {
		t.Fatal("a problem already in words was reworded")
	}
}
