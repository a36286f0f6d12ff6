package mlx

// capi_train.go wraps the shim's training ops (shim.c, end of file).

/*
#cgo noescape shim_linear_t
#cgo noescape shim_gather_linear_t
#include "shim.h"
*/
import "C"

func cLinearT(dy, w, scales, biases handle, bits, groupSize int, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_linear_t(&r, dy, w, scales, biases, C.int(bits), C.int(groupSize), s)
	return r, m
}

func cGatherLinearT(dy, w, scales, biases, idx handle, bits, groupSize int, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_gather_linear_t(&r, dy, w, scales, biases, idx, C.int(bits), C.int(groupSize), s)
	return r, m
}
