// Package bundle builds Perch.app for macOS: Info.plist (with the keys
// Fyne's packager cannot add: NSMicrophoneUsageDescription, LSUIElement),
// the audio-input entitlement, the icon, and libmlxc/libmlx/mlx.metallib
// from Homebrew's mlx-c placed where engine/mlx looks (Contents/Frameworks,
// the metallib in Resources with a link beside libmlx). bundle/mkapp runs
// it on a Mac; the layout and metadata checks run anywhere.
package bundle

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/template"
)

// InfoPlist is the Info.plist template ({{.Version}}, {{.Build}}).
//
//go:embed Info.plist
var InfoPlist []byte

// Entitlements are the code-signing entitlements.
//
//go:embed entitlements.plist
var Entitlements []byte

// Options say what goes into the app.
type Options struct {
	Out      string   // folder that will hold Perch.app
	Binary   string   // the darwin perch executable
	Icon     string   // Perch.icns, or "" for none
	Libs     []string // libmlxc.dylib, libmlx.dylib (and their dependencies)
	Metallib string   // mlx.metallib
	Version  string
	Build    int
}

// AppName is the bundle's folder name.
const AppName = "Perch.app"

// Assemble lays out Perch.app in o.Out (replacing an older one) and returns
// its path. Signing and install-name fixes are mkapp's job.
func Assemble(o Options) (string, error) {
	app := filepath.Join(o.Out, AppName)
	if err := os.RemoveAll(app); err != nil {
		return "", err
	}
	contents := filepath.Join(app, "Contents")
	for _, d := range []string{"MacOS", "Frameworks", "Resources"} {
		if err := os.MkdirAll(filepath.Join(contents, d), 0o755); err != nil {
			return "", err
		}
	}
	plist, err := RenderInfoPlist(o.Version, o.Build)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(contents, "Info.plist"), plist, 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(contents, "PkgInfo"), []byte("APPL????"), 0o644); err != nil {
		return "", err
	}
	if err := copyFile(o.Binary, filepath.Join(contents, "MacOS", "perch"), 0o755); err != nil {
		return "", fmt.Errorf("the perch binary: %w", err)
	}
	if o.Icon != "" {
		if err := copyFile(o.Icon, filepath.Join(contents, "Resources", "Perch.icns"), 0o644); err != nil {
			return "", err
		}
	}
	for _, lib := range o.Libs {
		if err := copyFile(lib, filepath.Join(contents, "Frameworks", filepath.Base(lib)), 0o755); err != nil {
			return "", fmt.Errorf("MLX library: %w", err)
		}
	}
	if o.Metallib != "" {
		// Data files under MacOS/ or Frameworks/ break strict signing, so
		// the metallib lives in Resources; MLX looks beside libmlx, where a
		// relative link points to it.
		if err := copyFile(o.Metallib, filepath.Join(contents, "Resources", "mlx.metallib"), 0o644); err != nil {
			return "", fmt.Errorf("mlx.metallib: %w", err)
		}
		if err := os.Symlink(filepath.Join("..", "Resources", "mlx.metallib"), filepath.Join(contents, "Frameworks", "mlx.metallib")); err != nil {
			return "", err
		}
	}
	return app, nil
}

// RenderInfoPlist fills the Info.plist template.
func RenderInfoPlist(version string, build int) ([]byte, error) {
	t, err := template.New("Info.plist").Option("missingkey=error").Parse(string(InfoPlist))
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, struct {
		Version string
		Build   int
	}{version, build}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
