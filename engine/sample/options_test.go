package sample

import "testing"

func TestOptionsOverKeepsWhatIsUnset(t *testing.T) {
	base := Params{Temperature: 1, TopP: 0.95, TopK: 64, RepetitionContext: 20, Seed: 9}
	if got := (Options{}).Over(base); got != base {
		t.Fatalf("empty options changed %+v into %+v", base, got)
	}
	temp, minP, seed := float32(0), float32(0.1), uint64(3)
	want := base
	want.Temperature, want.MinP, want.Seed = 0, 0.1, 3
	if got := (Options{Temperature: &temp, MinP: &minP, Seed: &seed}).Over(base); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}
