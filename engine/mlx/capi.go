package mlx

// capi.go is the only file that calls C: thin wrappers over shim.c, which
// resolves mlx-c at run time. A wrapper returns a nil cmsg on success, else
// MLX's message (copy it before the next call on this thread).

/*
#cgo LDFLAGS: -ldl -lm
#cgo noescape shim_open
#cgo noescape shim_version
#cgo noescape shim_default_stream
#cgo noescape shim_gpu_available
#cgo noescape shim_meta
#cgo noescape shim_free_many
#cgo noescape shim_from_data
#cgo noescape shim_scalar
#cgo noescape shim_zeros
#cgo noescape shim_eval
#cgo noescape shim_read_f32
#cgo noescape shim_read_i32
#cgo noescape shim_binary
#cgo noescape shim_unary
#cgo noescape shim_where
#cgo noescape shim_astype
#cgo noescape shim_gelu_tanh
#cgo noescape shim_reshape
#cgo noescape shim_transpose
#cgo noescape shim_slice
#cgo noescape shim_slice_update
#cgo noescape shim_concat
#cgo noescape shim_pad
#cgo noescape shim_take
#cgo noescape shim_reduce
#cgo noescape shim_softmax
#cgo noescape shim_cumsum
#cgo noescape shim_argop
#cgo noescape shim_categorical
#cgo noescape shim_linear
#cgo noescape shim_gather_linear
#cgo noescape shim_embedding
#cgo noescape shim_rms_norm
#cgo noescape shim_layer_norm
#cgo noescape shim_rope
#cgo noescape shim_sdpa
#cgo noescape shim_conv
#cgo noescape shim_memory
#cgo noescape shim_load_safetensors
#cgo noescape shim_map_iter_new
#cgo noescape shim_map_next
#cgo nocallback shim_binary
#cgo nocallback shim_unary
#cgo nocallback shim_meta
#cgo nocallback shim_free_many
#include "shim.h"
#include <stdlib.h>
*/
import "C"

import (
	"strings"
	"unsafe"
)

type (
	handle    = C.mx_array
	stream    = C.mx_stream
	cmsg      = *C.char
	mapHandle = C.mx_map
	mapIter   = C.mx_map_iter
)

// mlx_dtype values.
const (
	mxBool     = C.MX_BOOL
	mxUint8    = C.MX_UINT8
	mxUint32   = C.MX_UINT32
	mxInt32    = C.MX_INT32
	mxFloat16  = C.MX_FLOAT16
	mxFloat32  = C.MX_FLOAT32
	mxBFloat16 = C.MX_BFLOAT16
)

type binaryOp int

const (
	opAdd       binaryOp = C.SHIM_ADD
	opSub       binaryOp = C.SHIM_SUB
	opMul       binaryOp = C.SHIM_MUL
	opDiv       binaryOp = C.SHIM_DIV
	opMaximum   binaryOp = C.SHIM_MAXIMUM
	opMinimum   binaryOp = C.SHIM_MINIMUM
	opPow       binaryOp = C.SHIM_POW
	opEqual     binaryOp = C.SHIM_EQUAL
	opLess      binaryOp = C.SHIM_LESS
	opAnd       binaryOp = C.SHIM_AND
	opOr        binaryOp = C.SHIM_OR
	opLogAddExp binaryOp = C.SHIM_LOGADDEXP
	opMatMul    binaryOp = C.SHIM_MATMUL
)

type unaryOp int

const (
	opTanh    unaryOp = C.SHIM_TANH
	opExp     unaryOp = C.SHIM_EXP
	opLog     unaryOp = C.SHIM_LOG
	opSin     unaryOp = C.SHIM_SIN
	opCos     unaryOp = C.SHIM_COS
	opSqrt    unaryOp = C.SHIM_SQRT
	opRsqrt   unaryOp = C.SHIM_RSQRT
	opSigmoid unaryOp = C.SHIM_SIGMOID
)

type reduceOp int

const (
	opSum       reduceOp = C.SHIM_SUM
	opMean      reduceOp = C.SHIM_MEAN
	opMax       reduceOp = C.SHIM_MAX
	opLogSumExp reduceOp = C.SHIM_LOGSUMEXP
)

type argOp int

const (
	opArgmax       argOp = C.SHIM_ARGMAX
	opArgsort      argOp = C.SHIM_ARGSORT
	opArgPartition argOp = C.SHIM_ARGPARTITION
)

const (
	memActive = C.SHIM_MEM_ACTIVE
	memPeak   = C.SHIM_MEM_PEAK
	memCache  = C.SHIM_MEM_CACHE
)

// goString copies an MLX message, dropping mlx-c's " at <file>.cpp:<line>"
// suffix (the wrapper's location, the same for every failure of a function).
func goString(m cmsg) string {
	s := C.GoString(m)
	if i := strings.LastIndex(s, " at "); i >= 0 && strings.Contains(s[i:], ".cpp:") {
		s = s[:i]
	}
	return s
}

func ints(s []int32) *C.int { return (*C.int)(unsafe.Pointer(unsafe.SliceData(s))) }

func handles(s []handle) *C.mx_array { return unsafe.SliceData(s) }

func cbool(v bool) C.bool { return C.bool(v) }

// cOpen dlopens path (after dep, libmlx, when not empty) and resolves every
// symbol; the error text is "" on success.
func cOpen(dep, path string) string {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var cdep *C.char
	if dep != "" {
		cdep = C.CString(dep)
		defer C.free(unsafe.Pointer(cdep))
	}
	if m := C.shim_open(cdep, cpath); m != nil {
		return C.GoString(m)
	}
	return ""
}

func cVersion() (string, cmsg) {
	var buf [64]C.char
	m := C.shim_version(&buf[0], C.int(len(buf)))
	return C.GoString(&buf[0]), m
}

func cGPUAvailable() (bool, cmsg) {
	var ok C.bool
	m := C.shim_gpu_available(&ok)
	return bool(ok), m
}

func cDefaultStream(gpu bool) (stream, cmsg) {
	var s stream
	m := C.shim_default_stream(cbool(gpu), &s)
	return s, m
}

func cStreamFree(s stream) cmsg  { return C.shim_stream_free(s) }
func cSynchronize(s stream) cmsg { return C.shim_synchronize(s) }

// cMeta writes up to len(shape) dims and returns ndim and the mlx dtype.
func cMeta(h handle, shape []int32) (int, int) {
	var dt C.int
	nd := C.shim_meta(h, ints(shape), C.int(len(shape)), &dt)
	return int(nd), int(dt)
}

func cFreeMany(hs []handle) cmsg {
	if len(hs) == 0 {
		return nil
	}
	return C.shim_free_many(handles(hs), C.size_t(len(hs)))
}

func cFromData(data unsafe.Pointer, shape []int32, src, dst int, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_from_data(&r, data, ints(shape), C.int(len(shape)), C.int(src), C.int(dst), s)
	return r, m
}

func cScalar(v float64, dt int, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_scalar(&r, C.double(v), C.int(dt), s)
	return r, m
}

func cZeros(shape []int32, dt int, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_zeros(&r, ints(shape), C.int(len(shape)), C.int(dt), s)
	return r, m
}

func cEval(hs []handle, async bool) cmsg {
	return C.shim_eval(handles(hs), C.size_t(len(hs)), cbool(async))
}

func cReadF32(h handle, out []float32, s stream) cmsg {
	return C.shim_read_f32(h, (*C.float)(unsafe.Pointer(unsafe.SliceData(out))), C.size_t(len(out)), s)
}

func cReadI32(h handle, out []int32, s stream) cmsg {
	return C.shim_read_i32(h, (*C.int32_t)(unsafe.Pointer(unsafe.SliceData(out))), C.size_t(len(out)), s)
}

func cBinary(op binaryOp, a, b handle, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_binary(C.int(op), &r, a, b, s)
	return r, m
}

func cUnary(op unaryOp, a handle, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_unary(C.int(op), &r, a, s)
	return r, m
}

func cWhere(c, a, b handle, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_where(&r, c, a, b, s)
	return r, m
}

func cAsType(a handle, dt int, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_astype(&r, a, C.int(dt), s)
	return r, m
}

func cGeluTanh(x handle, consts *[5]handle, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_gelu_tanh(&r, x, &consts[0], s)
	return r, m
}

func cReshape(a handle, shape []int32, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_reshape(&r, a, ints(shape), C.int(len(shape)), s)
	return r, m
}

func cTranspose(a handle, perm []int32, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_transpose(&r, a, ints(perm), C.int(len(perm)), s)
	return r, m
}

func cSlice(a handle, start, stop []int32, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_slice(&r, a, ints(start), ints(stop), C.int(len(start)), s)
	return r, m
}

func cSliceUpdate(dst, src handle, start, stop []int32, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_slice_update(&r, dst, src, ints(start), ints(stop), C.int(len(start)), s)
	return r, m
}

func cConcat(hs []handle, axis int, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_concat(&r, handles(hs), C.size_t(len(hs)), C.int(axis), s)
	return r, m
}

func cPad(a handle, axis, lo, hi int, value float64, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_pad(&r, a, C.int(axis), C.int(lo), C.int(hi), C.double(value), s)
	return r, m
}

func cTake(a, idx handle, axis int, along bool, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_take(&r, a, idx, C.int(axis), cbool(along), s)
	return r, m
}

func cReduce(op reduceOp, a handle, axis int, keep bool, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_reduce(C.int(op), &r, a, C.int(axis), cbool(keep), s)
	return r, m
}

func cSoftmax(a handle, axis int, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_softmax(&r, a, C.int(axis), s)
	return r, m
}

func cCumsum(a handle, axis int, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_cumsum(&r, a, C.int(axis), s)
	return r, m
}

func cArgOp(op argOp, a handle, kth, axis int, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_argop(C.int(op), &r, a, C.int(kth), C.int(axis), s)
	return r, m
}

func cCategorical(logits handle, seed uint64, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_categorical(&r, logits, C.uint64_t(seed), s)
	return r, m
}

func cLinear(x, w, scales, biases, bias handle, bits, groupSize int, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_linear(&r, x, w, scales, biases, bias, C.int(bits), C.int(groupSize), s)
	return r, m
}

func cGatherLinear(x, w, scales, biases, bias, idx handle, bits, groupSize int, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_gather_linear(&r, x, w, scales, biases, bias, idx, C.int(bits), C.int(groupSize), s)
	return r, m
}

func cEmbedding(w, scales, biases, ids handle, bits, groupSize int, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_embedding(&r, w, scales, biases, ids, C.int(bits), C.int(groupSize), s)
	return r, m
}

func cRMSNorm(x, w handle, eps float32, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_rms_norm(&r, x, w, C.float(eps), s)
	return r, m
}

func cLayerNorm(x, w, b handle, eps float32, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_layer_norm(&r, x, w, b, C.float(eps), s)
	return r, m
}

func cRoPE(x handle, dims int, traditional, hasBase bool, base, scale float32, offset int, freqs handle, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_rope(&r, x, C.int(dims), cbool(traditional), cbool(hasBase), C.float(base),
		C.float(scale), C.int(offset), freqs, s)
	return r, m
}

func cSDPA(q, k, v handle, scale float32, maskKind int, mask handle, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_sdpa(&r, q, k, v, C.float(scale), C.int(maskKind), mask, s)
	return r, m
}

func cConv(x, w handle, ndim, stride0, stride1, pad0, pad1, groups int, s stream) (handle, cmsg) {
	var r handle
	m := C.shim_conv(&r, x, w, C.int(ndim), C.int(stride0), C.int(stride1), C.int(pad0),
		C.int(pad1), C.int(groups), s)
	return r, m
}

func cMemory(which int) (int64, cmsg) {
	var n C.size_t
	m := C.shim_memory(C.int(which), &n)
	return int64(n), m
}

func cResetPeak() cmsg  { return C.shim_reset_peak() }
func cClearCache() cmsg { return C.shim_clear_cache() }

func cLoadSafetensors(path string) (mapHandle, cmsg) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var r mapHandle
	m := C.shim_load_safetensors(cpath, &r)
	return r, m
}

func cMapIter(mp mapHandle) (mapIter, cmsg) {
	var it mapIter
	m := C.shim_map_iter_new(mp, &it)
	return it, m
}

// cMapNext returns the next entry; done reports the end of the map.
func cMapNext(it mapIter) (key string, h handle, done bool, m cmsg) {
	var k *C.char
	var d C.bool
	m = C.shim_map_next(it, &k, &h, &d)
	if m == nil && !bool(d) {
		key = C.GoString(k)
	}
	return key, h, bool(d), m
}

func cMapFree(mp mapHandle, it mapIter) { C.shim_map_free(mp, it) }

func isNull(h handle) bool { return h.ctx == 0 }
