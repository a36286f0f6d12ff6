// Command mkapp builds build/Perch.app on a Mac: the perch binary, the
// Info.plist and entitlements from bundle/, the icon from assets/icon.png,
// and libmlxc/libmlx/mlx.metallib from Homebrew (brew install mlx-c), with
// install names pointing inside the app and an ad-hoc signature.
//
//	go run ./bundle/mkapp [-out build] [-version 0.1.0]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"perch/bundle"
)

func main() {
	out := flag.String("out", "build", "folder for Perch.app")
	version := flag.String("version", "0.1.0", "CFBundleShortVersionString")
	build := flag.Int("build", 1, "CFBundleVersion")
	flag.Parse()
	if runtime.GOOS != "darwin" {
		fmt.Fprintln(os.Stderr, "mkapp: Perch.app is built on macOS (it needs Homebrew's mlx-c, sips, iconutil and codesign)")
		os.Exit(2)
	}
	if err := run(*out, *version, *build); err != nil {
		fmt.Fprintln(os.Stderr, "mkapp:", err)
		os.Exit(1)
	}
}

func run(out, version string, build int) error {
	tmp, err := os.MkdirTemp("", "perch-mkapp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	mlxc, err := brewPrefix("mlx-c")
	if err != nil {
		return err
	}
	mlx, err := brewPrefix("mlx")
	if err != nil {
		return err
	}
	libs := []string{filepath.Join(mlxc, "lib", "libmlxc.dylib"), filepath.Join(mlx, "lib", "libmlx.dylib")}
	metallib := filepath.Join(mlx, "lib", "mlx.metallib")
	for _, f := range append(libs, metallib) {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("%s is missing: run brew reinstall mlx-c", f)
		}
	}

	bin := filepath.Join(tmp, "perch")
	gobuild := exec.Command("go", "build", "-trimpath", "-o", bin, "./app")
	gobuild.Env = append(os.Environ(), "CGO_ENABLED=1")
	if err := step("go build", gobuild); err != nil {
		return err
	}
	icns, err := makeIcns(tmp, filepath.Join("assets", "icon.png"))
	if err != nil {
		return err
	}
	app, err := bundle.Assemble(bundle.Options{Out: out, Binary: bin, Icon: icns, Libs: libs, Metallib: metallib,
		Version: version, Build: build})
	if err != nil {
		return err
	}
	fw := filepath.Join(app, "Contents", "Frameworks")
	// libmlxc names libmlx by its Homebrew path; point it at the copy beside it.
	deps, err := exec.Command("otool", "-L", filepath.Join(fw, "libmlxc.dylib")).Output()
	if err != nil {
		return fmt.Errorf("otool -L libmlxc.dylib: %w", err)
	}
	for _, line := range strings.Split(string(deps), "\n")[1:] {
		dep := strings.Fields(line)
		if len(dep) > 0 && strings.HasSuffix(dep[0], "/libmlx.dylib") {
			if err := step("install_name_tool", exec.Command("install_name_tool", "-change", dep[0],
				"@loader_path/libmlx.dylib", filepath.Join(fw, "libmlxc.dylib"))); err != nil {
				return err
			}
		}
	}
	for _, lib := range []string{"libmlx.dylib", "libmlxc.dylib"} {
		if err := step("install_name_tool -id", exec.Command("install_name_tool", "-id", "@rpath/"+lib, filepath.Join(fw, lib))); err != nil {
			return err
		}
	}
	ent := filepath.Join(tmp, "entitlements.plist")
	if err := os.WriteFile(ent, bundle.Entitlements, 0o644); err != nil {
		return err
	}
	// Sign inside out: libraries, then the app with its entitlements.
	for _, lib := range []string{"libmlx.dylib", "libmlxc.dylib"} {
		if err := step("codesign "+lib, exec.Command("codesign", "--force", "--sign", "-", "--timestamp=none", filepath.Join(fw, lib))); err != nil {
			return err
		}
	}
	if err := step("codesign Perch.app", exec.Command("codesign", "--force", "--sign", "-", "--timestamp=none",
		"--options", "runtime", "--entitlements", ent, app)); err != nil {
		return err
	}
	if err := step("codesign --verify", exec.Command("codesign", "--verify", "--deep", "--strict", app)); err != nil {
		return err
	}
	fmt.Println("mkapp: built", app, "(ad-hoc signed)")
	return nil
}

func brewPrefix(formula string) (string, error) {
	out, err := exec.Command("brew", "--prefix", formula).Output()
	if err != nil {
		return "", fmt.Errorf("brew --prefix %s failed: install it with brew install mlx-c", formula)
	}
	return strings.TrimSpace(string(out)), nil
}

// makeIcns turns the 1024 px PNG into Perch.icns with sips and iconutil.
func makeIcns(tmp, png string) (string, error) {
	set := filepath.Join(tmp, "Perch.iconset")
	if err := os.MkdirAll(set, 0o755); err != nil {
		return "", err
	}
	for _, s := range []int{16, 32, 128, 256, 512} {
		for _, scale := range []int{1, 2} {
			name := fmt.Sprintf("icon_%dx%d.png", s, s)
			if scale == 2 {
				name = fmt.Sprintf("icon_%dx%d@2x.png", s, s)
			}
			px := fmt.Sprint(s * scale)
			if err := step("sips", exec.Command("sips", "-z", px, px, png, "--out", filepath.Join(set, name))); err != nil {
				return "", err
			}
		}
	}
	icns := filepath.Join(tmp, "Perch.icns")
	return icns, step("iconutil", exec.Command("iconutil", "-c", "icns", "-o", icns, set))
}

func step(name string, c *exec.Cmd) error {
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil {
		return fmt.Errorf("%s: %v\n%s", name, err, out.String())
	}
	return nil
}
