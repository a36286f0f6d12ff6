package mlx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

var (
	loadOnce sync.Once
	loadErr  error
	loadPath string
)

// Available loads libmlxc on first use and reports why MLX cannot be used,
// or nil. The search order is MLX_LIB_PATH (a file or a directory), the app
// bundle's Frameworks (<exe dir>/../Frameworks), the Homebrew prefix,
// /usr/local/lib, then the system loader path.
func Available() error {
	loadOnce.Do(func() {
		exe, _ := os.Executable()
		loadPath, loadErr = loadFrom(candidates(os.Getenv("MLX_LIB_PATH"), exe, runtime.GOOS), libName(runtime.GOOS))
		if loadErr == nil {
			loadErr = checkVersion()
		}
	})
	return loadErr
}

// LibraryPath is the libmlxc that Available loaded ("" before or on failure;
// the bare library name when the system loader found it).
func LibraryPath() string {
	if Available() != nil {
		return ""
	}
	return loadPath
}

// candidate is a place to look: a directory, or an explicit file.
type candidate struct {
	label string // how the error message names it
	dir   string
	file  string
}

func libName(goos string) string {
	if goos == "darwin" {
		return "libmlxc.dylib"
	}
	return "libmlxc.so"
}

func depName(goos string) string {
	if goos == "darwin" {
		return "libmlx.dylib"
	}
	return "libmlx.so"
}

// candidates lists where to look, in order, without duplicates.
func candidates(env, exe, goos string) []candidate {
	var out []candidate
	seen := map[string]bool{}
	add := func(c candidate) {
		key := c.dir + "\x00" + c.file
		if seen[key] {
			return
		}
		seen[key] = true
		out = append(out, c)
	}
	if env != "" {
		if st, err := os.Stat(env); err == nil && !st.IsDir() {
			add(candidate{label: "MLX_LIB_PATH=" + env, file: env})
		} else {
			add(candidate{label: "MLX_LIB_PATH=" + env, dir: env})
		}
	}
	if exe != "" {
		fw := filepath.Join(filepath.Dir(exe), "..", "Frameworks")
		add(candidate{label: fw, dir: filepath.Clean(fw)})
	}
	var brew []string
	if p := os.Getenv("HOMEBREW_PREFIX"); p != "" {
		brew = append(brew, filepath.Join(p, "lib"))
	}
	if goos == "darwin" {
		brew = append(brew, "/opt/homebrew/lib")
	} else {
		brew = append(brew, "/home/linuxbrew/.linuxbrew/lib")
	}
	for _, d := range brew {
		add(candidate{label: d, dir: d})
	}
	add(candidate{label: "/usr/local/lib", dir: "/usr/local/lib"})
	return out
}

// loadFrom opens the first candidate that holds a loadable libmlxc, then
// tries the system loader with the bare name (when system is not empty).
func loadFrom(cands []candidate, system string) (string, error) {
	var looked, failures []string
	for _, c := range cands {
		looked = append(looked, c.label)
		path, dep := c.file, ""
		if path == "" {
			path = filepath.Join(c.dir, libName(runtime.GOOS))
		}
		if _, err := os.Stat(path); err != nil {
			continue
		}
		if d := filepath.Join(filepath.Dir(path), depName(runtime.GOOS)); fileExists(d) {
			dep = d
		}
		if msg := cOpen(dep, path); msg != "" {
			failures = append(failures, path+": "+msg)
			continue
		}
		return path, nil
	}
	if system != "" {
		looked = append(looked, "system loader path")
		if msg := cOpen("", system); msg == "" {
			return system, nil
		} else if low := strings.ToLower(msg); !strings.Contains(low, "no such file") && !strings.Contains(low, "not found") {
			failures = append(failures, system+": "+msg)
		}
	}
	return "", notFound(looked, failures)
}

func notFound(looked, failures []string) error {
	const hint = "use --backend go or brew install mlx-c"
	if len(failures) > 0 {
		return fmt.Errorf("libmlxc found but not loadable (%s); %s", strings.Join(failures, "; "), hint)
	}
	return fmt.Errorf("libmlxc not found (looked in: %s); %s", strings.Join(looked, ", "), hint)
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// minVersion is the MLX release whose mlx-c ABI (0.6) shim.h declares.
var minVersion = [2]int{0, 31}

func checkVersion() error {
	v, m := cVersion()
	if m != nil {
		return errors.New("mlx: version: " + goString(m))
	}
	if !versionAtLeast(v, minVersion) {
		return fmt.Errorf("libmlxc at %s is MLX %s; Perch needs MLX %d.%d or newer (brew upgrade mlx-c), or use --backend go",
			loadPath, v, minVersion[0], minVersion[1])
	}
	return nil
}

func versionAtLeast(v string, min [2]int) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return false
	}
	return major > min[0] || (major == min[0] && minor >= min[1])
}

// Version is the MLX version of the loaded library.
func Version() (string, error) {
	if err := Available(); err != nil {
		return "", err
	}
	v, m := cVersion()
	if m != nil {
		return "", errors.New("mlx: version: " + goString(m))
	}
	return v, nil
}

// HasGPU reports whether MLX runs on a GPU here (Metal), without making a
// backend; false without libmlxc.
func HasGPU() bool {
	if Available() != nil {
		return false
	}
	gpu, m := cGPUAvailable()
	return m == nil && gpu
}
