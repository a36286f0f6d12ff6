package platform

import (
	"fmt"
	"os"
	"path/filepath"
)

// LoginItem starts Perch at login with an XDG autostart entry.
type LoginItem struct{ desktop string }

func NewLoginItem(string) LoginItem {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return LoginItem{}
		}
		dir = filepath.Join(home, ".config")
	}
	return LoginItem{desktop: filepath.Join(dir, "autostart", "perch.desktop")}
}

func (l LoginItem) Supported() bool { return l.desktop != "" }

func (l LoginItem) Set(on bool) error {
	if !on {
		if err := os.Remove(l.desktop); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(l.desktop), 0o755); err != nil {
		return err
	}
	entry := fmt.Sprintf("[Desktop Entry]\nType=Application\nName=Perch\nExec=%q gui -hidden\nX-GNOME-Autostart-enabled=true\n", exe)
	return os.WriteFile(l.desktop, []byte(entry), 0o644)
}
