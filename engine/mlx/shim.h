// shim.h: Perch's own declarations of the part of the mlx-c ABI it calls, and
// the small C layer (shim.c) that resolves it with dlopen/dlsym at run time.
// There is no link-time dependency on libmlxc: only -ldl.
//
// Every shim_* call returns NULL on success or MLX's error message (valid until
// the next shim call on the same OS thread).
#ifndef PERCH_MLX_SHIM_H
#define PERCH_MLX_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// Handles: one pointer each, laid out (and passed) as mlx-c's structs. The
// pointers are held as integers so that Go sees no pointers in them and
// cgo has nothing to check when they cross.
typedef struct { uintptr_t ctx; } mx_array;
typedef struct { uintptr_t ctx; } mx_stream;
typedef struct { uintptr_t ctx; } mx_map; // string -> array
typedef struct { uintptr_t ctx; uintptr_t map_ctx; } mx_map_iter;
typedef struct { uintptr_t ctx; } mx_vector; // of arrays

// mlx_dtype values (mlx-c's enum order).
enum {
	MX_BOOL = 0, MX_UINT8, MX_UINT16, MX_UINT32, MX_UINT64, MX_INT8, MX_INT16,
	MX_INT32, MX_INT64, MX_FLOAT16, MX_FLOAT32, MX_FLOAT64, MX_BFLOAT16, MX_COMPLEX64
};

// Op selectors for the table-driven trampolines.
enum {
	SHIM_ADD, SHIM_SUB, SHIM_MUL, SHIM_DIV, SHIM_MAXIMUM, SHIM_MINIMUM, SHIM_POW,
	SHIM_EQUAL, SHIM_LESS, SHIM_AND, SHIM_OR, SHIM_LOGADDEXP, SHIM_MATMUL, SHIM_NBINARY
};
enum {
	SHIM_TANH, SHIM_EXP, SHIM_LOG, SHIM_SIN, SHIM_COS, SHIM_SQRT, SHIM_RSQRT,
	SHIM_SIGMOID, SHIM_NUNARY
};
enum { SHIM_SUM, SHIM_MEAN, SHIM_MAX, SHIM_LOGSUMEXP, SHIM_NREDUCE };
enum { SHIM_ARGMAX, SHIM_ARGSORT, SHIM_ARGPARTITION };
enum { SHIM_MEM_ACTIVE, SHIM_MEM_PEAK, SHIM_MEM_CACHE };

// Loading.
const char* shim_open(const char* dep_path, const char* path);
int shim_loaded(void);
const char* shim_version(char* buf, int cap);
const char* shim_default_stream(bool gpu, mx_stream* res);
const char* shim_gpu_available(bool* res);
const char* shim_stream_free(mx_stream s);
const char* shim_synchronize(mx_stream s);

// Arrays.
int shim_meta(mx_array a, int* shape, int cap, int* dtype);
const char* shim_free_many(const mx_array* arrs, size_t n);
const char* shim_from_data(mx_array* res, const void* data, const int* shape, int ndim,
	int src_dtype, int dst_dtype, mx_stream s);
const char* shim_scalar(mx_array* res, double v, int dtype, mx_stream s);
const char* shim_zeros(mx_array* res, const int* shape, int ndim, int dtype, mx_stream s);
const char* shim_eval(const mx_array* arrs, size_t n, bool async);
const char* shim_read_f32(mx_array a, float* out, size_t n, mx_stream s);
const char* shim_read_i32(mx_array a, int32_t* out, size_t n, mx_stream s);

// Elementwise.
const char* shim_binary(int op, mx_array* res, mx_array a, mx_array b, mx_stream s);
const char* shim_unary(int op, mx_array* res, mx_array a, mx_stream s);
const char* shim_where(mx_array* res, mx_array c, mx_array a, mx_array b, mx_stream s);
const char* shim_astype(mx_array* res, mx_array a, int dtype, mx_stream s);
const char* shim_gelu_tanh(mx_array* res, mx_array x, const mx_array* consts, mx_stream s);

// Shape.
const char* shim_reshape(mx_array* res, mx_array a, const int* shape, int n, mx_stream s);
const char* shim_transpose(mx_array* res, mx_array a, const int* perm, int n, mx_stream s);
const char* shim_slice(mx_array* res, mx_array a, const int* start, const int* stop, int n,
	mx_stream s);
const char* shim_slice_update(mx_array* res, mx_array dst, mx_array src, const int* start,
	const int* stop, int n, mx_stream s);
const char* shim_concat(mx_array* res, const mx_array* arrs, size_t n, int axis, mx_stream s);
const char* shim_pad(mx_array* res, mx_array a, int axis, int lo, int hi, double value,
	mx_stream s);
const char* shim_take(mx_array* res, mx_array a, mx_array idx, int axis, bool along,
	mx_stream s);

// Reductions, sorting, sampling.
const char* shim_reduce(int op, mx_array* res, mx_array a, int axis, bool keepdims, mx_stream s);
const char* shim_softmax(mx_array* res, mx_array a, int axis, mx_stream s);
const char* shim_cumsum(mx_array* res, mx_array a, int axis, mx_stream s);
const char* shim_argop(int op, mx_array* res, mx_array a, int kth, int axis, mx_stream s);
const char* shim_categorical(mx_array* res, mx_array logits, uint64_t seed, mx_stream s);

// Neural-network ops. Null handles (ctx == NULL) mean "absent".
const char* shim_linear(mx_array* res, mx_array x, mx_array w, mx_array scales,
	mx_array biases, mx_array bias, int bits, int group_size, mx_stream s);
const char* shim_gather_linear(mx_array* res, mx_array x, mx_array w, mx_array scales,
	mx_array biases, mx_array bias, mx_array idx, int bits, int group_size, mx_stream s);
const char* shim_embedding(mx_array* res, mx_array w, mx_array scales, mx_array biases,
	mx_array ids, int bits, int group_size, mx_stream s);
const char* shim_rms_norm(mx_array* res, mx_array x, mx_array w, float eps, mx_stream s);
const char* shim_layer_norm(mx_array* res, mx_array x, mx_array w, mx_array b, float eps,
	mx_stream s);
const char* shim_rope(mx_array* res, mx_array x, int dims, bool traditional, bool has_base,
	float base, float scale, int offset, mx_array freqs, mx_stream s);
const char* shim_sdpa(mx_array* res, mx_array q, mx_array k, mx_array v, float scale,
	int mask_kind, mx_array mask, mx_stream s);
const char* shim_conv(mx_array* res, mx_array x, mx_array w, int ndim, int stride0,
	int stride1, int pad0, int pad1, int groups, mx_stream s);

// Memory and I/O.
const char* shim_memory(int which, size_t* res);
const char* shim_reset_peak(void);
const char* shim_clear_cache(void);
const char* shim_load_safetensors(const char* path, mx_map* res);
const char* shim_map_iter_new(mx_map m, mx_map_iter* res);
// shim_map_next sets key and value, or *done at the end of the map.
const char* shim_map_next(mx_map_iter it, const char** key, mx_array* value, bool* done);
void shim_map_free(mx_map m, mx_map_iter it);


// Training: dy @ W for a frozen (possibly quantized) weight, and its
// expert-gathered form (dy [N, K, Out], idx [N, K] -> [N, K, In]).
const char* shim_linear_t(mx_array* res, mx_array dy, mx_array w, mx_array scales,
	mx_array biases, int bits, int group_size, mx_stream s);
const char* shim_gather_linear_t(mx_array* res, mx_array dy, mx_array w, mx_array scales,
	mx_array biases, mx_array idx, int bits, int group_size, mx_stream s);

#endif
