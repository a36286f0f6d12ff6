// Package models is the models page and the welcome page shown while there
// is no model: the catalog's models with their fit, downloads and their
// progress, and local folders. It reads ui.Catalog and ui.Model, follows
// their Watch callbacks on the UI goroutine, and calls them on the user's
// choice.
package models
