//go:build !darwin && !linux

package main

type loginItem struct{}

func newLoginItem() loginItem     { return loginItem{} }
func (loginItem) Supported() bool { return false }
func (loginItem) Set(bool) error  { return nil }
