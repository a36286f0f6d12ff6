package bundle

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fyneApp reads [Details] ID and Version from FyneApp.toml.
func fyneApp(t *testing.T) (id, version string) {
	f, err := os.Open(filepath.Join("..", "FyneApp.toml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		switch strings.TrimSpace(k) {
		case "ID":
			id = v
		case "Version":
			version = v
		}
	}
	if id == "" || version == "" {
		t.Fatal("FyneApp.toml has no ID or Version")
	}
	return id, version
}

func TestInfoPlistHasWhatMacOSNeeds(t *testing.T) {
	id, version := fyneApp(t)
	data, err := RenderInfoPlist(version, 7)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParsePlist(data)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"CFBundleIdentifier":         id,
		"CFBundleShortVersionString": version,
		"CFBundleVersion":            "7",
		"CFBundleExecutable":         "perch",
		"CFBundlePackageType":        "APPL",
		"CFBundleIconFile":           "Perch",
		"LSUIElement":                true, // menubar app: no Dock icon
		"NSHighResolutionCapable":    true,
	}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("%s = %v, want %v", k, p[k], v)
		}
	}
	// Without this key macOS kills the app the moment it opens the mic.
	mic, _ := p["NSMicrophoneUsageDescription"].(string)
	if len(mic) < 30 || !strings.Contains(mic, "Mac") {
		t.Errorf("NSMicrophoneUsageDescription = %q: say why Perch listens", mic)
	}
	minOS, _ := p["LSMinimumSystemVersion"].(string)
	if major, _ := strconv.Atoi(strings.Split(minOS, ".")[0]); major < 13 {
		t.Errorf("LSMinimumSystemVersion = %q: MLX needs macOS 13.5 or later", minOS)
	}
}

func TestEntitlements(t *testing.T) {
	p, err := ParsePlist(Entitlements)
	if err != nil {
		t.Fatal(err)
	}
	if p["com.apple.security.device.audio-input"] != true {
		t.Error("com.apple.security.device.audio-input must be true: the hardened runtime records silence without it")
	}
	// Go needs no JIT; a sandbox would shut out ~/.cache/huggingface.
	for _, k := range []string{
		"com.apple.security.cs.allow-jit",
		"com.apple.security.cs.allow-unsigned-executable-memory",
		"com.apple.security.cs.disable-library-validation",
		"com.apple.security.cs.allow-dyld-environment-variables",
		"com.apple.security.app-sandbox",
	} {
		if _, ok := p[k]; ok {
			t.Errorf("%s must not be granted", k)
		}
	}
}

func TestAssembleLayout(t *testing.T) {
	src := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(src, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	out := t.TempDir()
	app, err := Assemble(Options{
		Out: out, Binary: file("perch", "\xcf\xfa\xed\xfebinary"), Icon: file("Perch.icns", "icns"),
		Libs:     []string{file("libmlxc.dylib", "mlxc"), file("libmlx.dylib", "mlx")},
		Metallib: file("mlx.metallib", "MTLB"), Version: "0.1.0", Build: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if app != filepath.Join(out, "Perch.app") {
		t.Fatalf("app at %s", app)
	}
	c := filepath.Join(app, "Contents")
	for rel, content := range map[string]string{
		"MacOS/perch": "\xcf\xfa\xed\xfebinary", "Frameworks/libmlxc.dylib": "mlxc", "Frameworks/libmlx.dylib": "mlx",
		"Resources/mlx.metallib": "MTLB", "Resources/Perch.icns": "icns", "PkgInfo": "APPL????",
		"Frameworks/mlx.metallib": "MTLB", // through the link
	} {
		got, err := os.ReadFile(filepath.Join(c, rel))
		if err != nil || string(got) != content {
			t.Errorf("%s = %q, %v", rel, got, err)
		}
	}
	if fi, err := os.Lstat(filepath.Join(c, "Frameworks", "mlx.metallib")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Error("Frameworks/mlx.metallib should be a link into Resources (data in Frameworks breaks strict signing)")
	}
	if fi, _ := os.Stat(filepath.Join(c, "MacOS", "perch")); fi.Mode()&0o111 == 0 {
		t.Error("the executable is not executable")
	}
	// Only the executable lives in MacOS/ (strict codesign refuses data there).
	entries, _ := os.ReadDir(filepath.Join(c, "MacOS"))
	if len(entries) != 1 {
		t.Errorf("MacOS/ holds %d entries", len(entries))
	}
	plist, _ := os.ReadFile(filepath.Join(c, "Info.plist"))
	p, err := ParsePlist(plist)
	if err != nil || p["CFBundleShortVersionString"] != "0.1.0" {
		t.Fatalf("Info.plist: %v %v", p["CFBundleShortVersionString"], err)
	}
	// Assembling again replaces the old app.
	if _, err := Assemble(Options{Out: out, Binary: filepath.Join(src, "perch"), Version: "0.1.1", Build: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(c, "Frameworks", "libmlx.dylib")); !os.IsNotExist(err) {
		t.Error("old files survived a rebuild")
	}
}

func TestParsePlistRefusesBadInput(t *testing.T) {
	for name, in := range map[string]string{
		"not xml":       "hello",
		"array root":    `<plist><array/></plist>`,
		"duplicate key": `<plist><dict><key>a</key><true/><key>a</key><false/></dict></plist>`,
		"value missing": `<plist><dict><key>a</key></dict></plist>`,
		"bad integer":   `<plist><dict><key>a</key><integer>x</integer></dict></plist>`,
		"truncated":     `<plist><dict><key>a</key><string>b`,
	} {
		if _, err := ParsePlist([]byte(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	p, err := ParsePlist([]byte(`<plist><dict><key>n</key><integer> 3 </integer><key>l</key><array><string>x</string><true/></array><key>d</key><dict><key>k</key><string>v</string></dict></dict></plist>`))
	if err != nil || p["n"] != int64(3) || len(p["l"].([]any)) != 2 || p["d"].(map[string]any)["k"] != "v" {
		t.Fatalf("nested plist: %v, %v", p, err)
	}
}

// FuzzParsePlist: arbitrary bytes never panic the plist checker.
func FuzzParsePlist(f *testing.F) {
	f.Add(InfoPlist)
	f.Add(Entitlements)
	f.Add([]byte(`<plist><dict><key>a</key><array><array><dict/></array></array></dict></plist>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePlist(data)
		if err == nil && p == nil {
			t.Fatal("nil dict without error")
		}
	})
}
