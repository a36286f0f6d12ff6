// Package catalog is the models page's view of the hub: the curated list,
// cached snapshots and folders the user added, each with its size and a
// fit verdict for this machine, and downloads with progress, pause,
// cancel and delete. Locate turns a model id into the folder the chat
// runtime loads. It implements ui.Catalog.
package catalog
