package platform

import (
	"os"

	"github.com/godbus/dbus/v5"
)

// TrayHostPresent reports whether a StatusNotifierItem host is running. With
// none, closing the window would leave no way back, so Perch then keeps the
// window as its only surface and quits when it closes.
func TrayHostPresent() bool {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		return false
	}
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return false
	}
	defer conn.Close()
	var has bool
	err = conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.kde.StatusNotifierWatcher").Store(&has)
	return err == nil && has
}
