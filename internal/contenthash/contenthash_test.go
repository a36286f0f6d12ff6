package contenthash

import "testing"

func TestOfIsSHA256HexAndCounted(t *testing.T) {
	before := Count()
	if got := Of([]byte("abc")); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("Of(abc) = %s", got)
	}
	if n := Count() - before; n != 1 {
		t.Fatalf("counted %d hashes, want 1", n)
	}
}
