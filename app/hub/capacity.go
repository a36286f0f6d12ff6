package hub

import "runtime"

// Capacity is the memory this computer can give a model, and how it was
// found: the one figure the Models page and Teach both judge a need by.
// On Linux it is three quarters of the RAM (the rest is the system's and
// other apps'); elsewhere the budget's usable memory (on a Mac, the GPU's
// working set). It is a matter of the machine, never of what happens to be
// free this minute.
func Capacity(b Budget) (int64, string) {
	if runtime.GOOS == "linux" && b.TotalRAM > 0 {
		return b.TotalRAM / 4 * 3, "three quarters of its RAM"
	}
	return b.Usable, b.Source
}

// Room is how a need sits in Capacity.
type Room string

const (
	Roomy  Room = "roomy"
	Tight  Room = "tight"   // over 80% of it, or more than is free now: close other apps
	TooBig Room = "too big" // more than the machine can give
)

// Judge places need in the machine's Capacity; now is what is free at the
// moment, which can make a fit tight but never too big. "" when a size is
// unknown.
func Judge(need int64, machine, now Budget) Room {
	capacity, _ := Capacity(machine)
	switch {
	case need <= 0 || capacity <= 0:
		return ""
	case need > capacity:
		return TooBig
	case float64(need) > 0.8*float64(capacity) || (now.Usable > 0 && need > now.Usable):
		return Tight
	}
	return Roomy
}
