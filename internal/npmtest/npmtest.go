// Package npmtest installs the npm packages a test runs (real clients and
// servers, pinned by a package-lock.json beside the caller) into a
// git-ignored folder under testdata/cache at the repository root, with npm
// ci, once per lock file. Without node or npm, or offline, the test skips in
// one line, and fails when PERCH_REQUIRE_REAL_VOCAB=1, as in CI.
package npmtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Install installs what pkgDir's package.json and package-lock.json pin
// into testdata/cache/<cacheName> and returns that folder (it holds
// node_modules). what names the packages in skip and failure lines.
func Install(t testing.TB, what, pkgDir, cacheName string) string {
	t.Helper()
	unavailable := func(why string) {
		t.Helper()
		if os.Getenv("PERCH_REQUIRE_REAL_VOCAB") == "1" {
			t.Fatalf("%s from npm: %s (PERCH_REQUIRE_REAL_VOCAB=1 requires them)", what, why)
		}
		t.Skipf("%s from npm did not run: %s", what, why)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable("node is not installed")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		unavailable("npm is not installed")
	}
	v, _ := exec.Command(node, "--version").Output()
	if major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(strings.TrimSpace(string(v)), "v"), ".", 2)[0]); major < 18 {
		unavailable("node " + strings.TrimSpace(string(v)) + " is older than 18")
	}
	lock, err := os.ReadFile(filepath.Join(pkgDir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(lock)
	stamp := hex.EncodeToString(sum[:])
	cache := filepath.Join(root(), "testdata", "cache", cacheName)
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	// go test runs packages in parallel; one installs at a time.
	lf, err := os.OpenFile(filepath.Join(cache, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	defer syscall.Flock(int(lf.Fd()), syscall.LOCK_UN)
	if have, _ := os.ReadFile(filepath.Join(cache, "installed")); string(have) == stamp {
		return cache
	}
	for _, f := range []string{"package.json", "package-lock.json"} {
		data, err := os.ReadFile(filepath.Join(pkgDir, f))
		if err == nil {
			err = os.WriteFile(filepath.Join(cache, f), data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--prefer-offline")
	cmd.Dir = cache
	if out, err := cmd.CombinedOutput(); err != nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		unavailable("npm ci failed (offline?): " + lines[len(lines)-1])
	}
	if err := os.WriteFile(filepath.Join(cache, "installed"), []byte(stamp), 0o644); err != nil {
		t.Fatal(err)
	}
	return cache
}

// Node is the node binary Install checked for.
func Node(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	return node
}

// root is the repository's root (this file is at internal/npmtest).
func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}
