//go:build !linux && !darwin

package hub

import "errors"

// MachineBudget is unknown on this system.
func MachineBudget() (Budget, error) {
	return Budget{}, errors.New("cannot read this machine's memory size")
}
