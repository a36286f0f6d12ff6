// Package desktop composes the menubar app: it opens the history, the
// model runtime, the catalog, the Teach service and the local API, hands
// them to ui/window as the ports package ui declares, and wires the
// platform's hotkey, login item, tray and single-instance socket (package
// platform) to the windows. Data flows one way: the views call the
// services through the ports, the services call the engine through
// package engines and app/chat.
// The screenshot harness (package desktop/shots) plugs in through
// Harness, only in builds tagged screenshots.
package desktop
