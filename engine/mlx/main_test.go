package mlx

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
)

// skipLine is set when libmlxc cannot be used; TestMain prints it once and
// every MLX test skips with it.
var skipLine string

func TestMain(m *testing.M) {
	if err := Available(); err != nil {
		skipLine = "libmlxc not found: MLX tests skipped (set MLX_LIB_PATH or install mlx-c)"
		if !strings.HasPrefix(err.Error(), "libmlxc not found") {
			skipLine = "libmlxc unusable: MLX tests skipped: " + err.Error()
		}
		fmt.Println(skipLine)
	}
	os.Exit(m.Run())
}

// newBackend returns a backend bound to the test's goroutine and OS thread,
// closed when the test ends.
func newBackend(t testing.TB) *Backend {
	t.Helper()
	if skipLine != "" {
		t.Skip(skipLine)
	}
	runtime.LockOSThread()
	b, err := New()
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
		runtime.UnlockOSThread()
	})
	return b
}
