package resample

import "testing"

func BenchmarkBicubic12MP(b *testing.B) {
	w, h := 4032, 3024
	src := make([]uint8, 3*w*h)
	for i := range src {
		src[i] = uint8(i * 7 >> 3)
	}
	b.SetBytes(int64(w * h))
	for i := 0; i < b.N; i++ {
		if _, err := BicubicRGB(src, w, h, 912, 672); err != nil {
			b.Fatal(err)
		}
	}
}
