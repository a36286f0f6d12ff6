//go:build !darwin && !linux

package platform

type LoginItem struct{}

func NewLoginItem(string) LoginItem { return LoginItem{} }
func (LoginItem) Supported() bool   { return false }
func (LoginItem) Set(bool) error    { return nil }
