//go:build unix

package platform

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Instance makes Perch one app per data folder: the first launch holds a
// lock and listens on a socket beside its history; a later launch, or
// perch quick-ask, hands its wish to it and exits. The kernel drops the lock
// when the process dies, so a crash leaves nothing stale.
type Instance struct {
	lock *os.File
	ln   net.Listener
	path string
}

// ErrRunning: another Perch holds the data folder.
var ErrRunning = errors.New("Perch is already running")

// Instance commands.
const (
	CmdShow     = "show"      // raise the main window
	CmdQuickAsk = "quick-ask" // open the quick-ask popup
)

// ClaimInstance makes this process the data folder's Perch; Serve then
// takes the commands later launches send. ErrRunning means another one is.
func ClaimInstance(dir string) (*Instance, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "perch.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrRunning
		}
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	path := socketPath(dir)
	os.Remove(path) // a crashed instance's; the lock says no one serves it
	ln, err := net.Listen("unix", path)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("listen for other launches: %w", err)
	}
	return &Instance{lock: f, ln: ln, path: path}, nil
}

// Serve runs handle for each command a later launch sends (on its own
// goroutine; a launch that comes first waits for it).
func (in *Instance) Serve(handle func(cmd string)) { go in.serve(handle) }

func (in *Instance) serve(handle func(string)) {
	for {
		c, err := in.ln.Accept()
		if err != nil {
			return // closed
		}
		go func() {
			defer c.Close()
			c.SetDeadline(time.Now().Add(2 * time.Second))
			line, err := bufio.NewReader(io.LimitReader(c, 64)).ReadString('\n')
			cmd := strings.TrimSpace(line)
			if err != nil || (cmd != CmdShow && cmd != CmdQuickAsk) {
				fmt.Fprintln(c, "unknown command")
				return
			}
			handle(cmd)
			fmt.Fprintln(c, "ok")
		}()
	}
}

// Close stops listening and lets the data folder go.
func (in *Instance) Close() {
	in.ln.Close()
	os.Remove(in.path)
	in.lock.Close()
}

// AskInstance sends cmd to the Perch holding dir, waiting a little for one
// that is still starting (its lock taken, its socket not yet open).
func AskInstance(dir, cmd string) error {
	var err error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var c net.Conn
		if c, err = net.DialTimeout("unix", socketPath(dir), time.Second); err != nil {
			continue
		}
		c.SetDeadline(time.Now().Add(3 * time.Second))
		fmt.Fprintln(c, cmd)
		reply, rerr := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if strings.TrimSpace(reply) == "ok" {
			return nil
		}
		return fmt.Errorf("the running Perch did not take %q: %v %s", cmd, rerr, strings.TrimSpace(reply))
	}
	return fmt.Errorf("the running Perch does not answer: %w", err)
}

// socketPath is the socket beside the history, or (a path too long for a
// Unix socket) one in the temp folder named after the data folder.
func socketPath(dir string) string {
	if p := filepath.Join(dir, "perch.sock"); len(p) < 100 {
		return p
	}
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join(os.TempDir(), "perch-"+hex.EncodeToString(sum[:8])+".sock")
}
