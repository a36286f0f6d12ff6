// Package platform is what Perch asks of the operating system beyond a
// window: the global quick-ask shortcut (Carbon on macOS, an X11 grab on
// Linux), the launch-at-login item, whether a tray host is there, and one
// app per data folder (a lock and a socket later launches hand their wish
// to). Each has a file per OS behind build tags; the rest of the app sees
// one type per concern.
package platform
