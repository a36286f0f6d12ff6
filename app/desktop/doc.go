// Package desktop composes the menubar app: it opens the history, the
// model runtime, the catalog, the Teach service and the local API, hands
// them to the ui package as its ports, and wires the platform's hotkey,
// login item, tray and single-instance socket (package platform) to the
// windows. Data flows one way: ui calls the services through the ports,
// the services call the engine through package engines and app/chat.
// The screenshot harness (package desktop/shots) plugs in through
// Harness, only in builds tagged screenshots.
package desktop
