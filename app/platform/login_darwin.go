package platform

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// LoginItem starts Perch at login with a per-user LaunchAgent, which needs
// no entitlement and works for an unsigned development build too.
type LoginItem struct{ plist, appID string }

func NewLoginItem(appID string) LoginItem {
	home, _ := os.UserHomeDir()
	return LoginItem{plist: filepath.Join(home, "Library", "LaunchAgents", appID+".plist"), appID: appID}
}

func (l LoginItem) Supported() bool { return l.plist != "" }

func (l LoginItem) Set(on bool) error {
	if !on {
		if err := os.Remove(l.plist); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(l.plist), 0o755); err != nil {
		return err
	}
	return os.WriteFile(l.plist, []byte(launchAgent(l.appID, exe)), 0o644)
}

// launchAgent is the LaunchAgent plist that opens Perch in the menubar.
func launchAgent(appID, exe string) string {
	esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(exe)
	return fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key><string>%s</string>
	<key>ProgramArguments</key><array><string>%s</string><string>gui</string><string>-hidden</string></array>
	<key>RunAtLoad</key><true/>
	<key>ProcessType</key><string>Interactive</string>
</dict>
</plist>
`, appID, esc)
}
