//go:build !darwin

package history

const fullfsyncPragmas = ""
