// shim.c: resolves the mlx-c functions Perch uses at run time and wraps them in
// trampolines that turn mlx-c's error handler into returned messages.
#include "shim.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct { void* ctx; } mx_string;
typedef struct { void* ctx; } mx_map_str; // string -> string
typedef struct { void* ctx; } mx_device;
typedef struct { int value; bool has_value; } mx_opt_int;
typedef struct { float value; bool has_value; } mx_opt_float;
typedef struct { int value; bool has_value; } mx_opt_dtype;

typedef mx_array A;
typedef mx_stream S;
typedef int (*fn_unary)(A*, A, S);
typedef int (*fn_binary)(A*, A, A, S);
typedef int (*fn_reduce)(A*, A, int, bool, S);

// X(return type, name, parameter list): every symbol shim_open must resolve.
#define SHIM_SYMBOLS(X)                                                              \
	X(void, mlx_set_error_handler, (void (*)(const char*, void*), void*, void (*)(void*))) \
	X(int, mlx_version, (mx_string*))                                                \
	X(mx_string, mlx_string_new, (void))                                             \
	X(const char*, mlx_string_data, (mx_string))                                     \
	X(int, mlx_string_free, (mx_string))                                             \
	X(int, mlx_metal_is_available, (bool*))                                          \
	X(S, mlx_default_cpu_stream_new, (void))                                         \
	X(S, mlx_default_gpu_stream_new, (void))                                         \
	X(int, mlx_stream_free, (S))                                                     \
	X(int, mlx_synchronize, (S))                                                     \
	X(A, mlx_array_new_data, (const void*, const int*, int, int))                    \
	X(A, mlx_array_new_float, (float))                                               \
	X(A, mlx_array_new_int, (int))                                                   \
	X(A, mlx_array_new_bool, (bool))                                                 \
	X(int, mlx_array_free, (A))                                                      \
	X(size_t, mlx_array_ndim, (A))                                                   \
	X(const int*, mlx_array_shape, (A))                                              \
	X(int, mlx_array_dtype, (A))                                                     \
	X(size_t, mlx_array_size, (A))                                                   \
	X(const float*, mlx_array_data_float32, (A))                                     \
	X(const int32_t*, mlx_array_data_int32, (A))                                     \
	X(mx_vector, mlx_vector_array_new_data, (const A*, size_t))                      \
	X(int, mlx_vector_array_free, (mx_vector))                                       \
	X(int, mlx_eval, (mx_vector))                                                    \
	X(int, mlx_async_eval, (mx_vector))                                              \
	X(int, mlx_add, (A*, A, A, S))                                                   \
	X(int, mlx_subtract, (A*, A, A, S))                                              \
	X(int, mlx_multiply, (A*, A, A, S))                                              \
	X(int, mlx_divide, (A*, A, A, S))                                                \
	X(int, mlx_maximum, (A*, A, A, S))                                               \
	X(int, mlx_minimum, (A*, A, A, S))                                               \
	X(int, mlx_power, (A*, A, A, S))                                                 \
	X(int, mlx_equal, (A*, A, A, S))                                                 \
	X(int, mlx_less, (A*, A, A, S))                                                  \
	X(int, mlx_logical_and, (A*, A, A, S))                                           \
	X(int, mlx_logical_or, (A*, A, A, S))                                            \
	X(int, mlx_logaddexp, (A*, A, A, S))                                             \
	X(int, mlx_matmul, (A*, A, A, S))                                                \
	X(int, mlx_tanh, (A*, A, S))                                                     \
	X(int, mlx_exp, (A*, A, S))                                                      \
	X(int, mlx_log, (A*, A, S))                                                      \
	X(int, mlx_sin, (A*, A, S))                                                      \
	X(int, mlx_cos, (A*, A, S))                                                      \
	X(int, mlx_sqrt, (A*, A, S))                                                     \
	X(int, mlx_rsqrt, (A*, A, S))                                                    \
	X(int, mlx_sigmoid, (A*, A, S))                                                  \
	X(int, mlx_where, (A*, A, A, A, S))                                              \
	X(int, mlx_astype, (A*, A, int, S))                                              \
	X(int, mlx_contiguous, (A*, A, bool, S))                                         \
	X(int, mlx_zeros, (A*, const int*, size_t, int, S))                              \
	X(int, mlx_reshape, (A*, A, const int*, size_t, S))                              \
	X(int, mlx_transpose_axes, (A*, A, const int*, size_t, S))                       \
	X(int, mlx_swapaxes, (A*, A, int, int, S))                                       \
	X(int, mlx_expand_dims, (A*, A, int, S))                                         \
	X(int, mlx_squeeze_axis, (A*, A, int, S))                                        \
	X(int, mlx_slice, (A*, A, const int*, size_t, const int*, size_t, const int*, size_t, S)) \
	X(int, mlx_slice_update, (A*, A, A, const int*, size_t, const int*, size_t, const int*, size_t, S)) \
	X(int, mlx_concatenate_axis, (A*, mx_vector, int, S))                            \
	X(int, mlx_pad, (A*, A, const int*, size_t, const int*, size_t, const int*, size_t, A, const char*, S)) \
	X(int, mlx_take_axis, (A*, A, A, int, S))                                        \
	X(int, mlx_take_along_axis, (A*, A, A, int, S))                                  \
	X(int, mlx_sum_axis, (A*, A, int, bool, S))                                      \
	X(int, mlx_mean_axis, (A*, A, int, bool, S))                                     \
	X(int, mlx_max_axis, (A*, A, int, bool, S))                                      \
	X(int, mlx_logsumexp_axis, (A*, A, int, bool, S))                                \
	X(int, mlx_argmax_axis, (A*, A, int, bool, S))                                   \
	X(int, mlx_softmax_axis, (A*, A, int, bool, S))                                  \
	X(int, mlx_argsort_axis, (A*, A, int, S))                                        \
	X(int, mlx_argpartition_axis, (A*, A, int, int, S))                              \
	X(int, mlx_cumsum, (A*, A, int, bool, bool, S))                                  \
	X(int, mlx_random_key, (A*, uint64_t))                                           \
	X(int, mlx_random_categorical, (A*, A, int, A, S))                               \
	X(int, mlx_addmm, (A*, A, A, A, float, float, S))                                \
	X(int, mlx_quantized_matmul, (A*, A, A, A, A, bool, mx_opt_int, mx_opt_int, const char*, S)) \
	X(int, mlx_gather_qmm, (A*, A, A, A, A, A, A, bool, mx_opt_int, mx_opt_int, const char*, bool, S)) \
	X(int, mlx_gather_mm, (A*, A, A, A, A, bool, S))                                 \
	X(int, mlx_dequantize, (A*, A, A, A, mx_opt_int, mx_opt_int, const char*, A, mx_opt_dtype, S)) \
	X(int, mlx_fast_rms_norm, (A*, A, A, float, S))                                  \
	X(int, mlx_fast_layer_norm, (A*, A, A, A, float, S))                             \
	X(int, mlx_fast_rope, (A*, A, int, bool, mx_opt_float, float, int, A, S))        \
	X(int, mlx_fast_scaled_dot_product_attention, (A*, A, A, A, float, const char*, A, A, S)) \
	X(int, mlx_conv1d, (A*, A, A, int, int, int, int, S))                            \
	X(int, mlx_conv2d, (A*, A, A, int, int, int, int, int, int, int, S))             \
	X(int, mlx_get_active_memory, (size_t*))                                         \
	X(int, mlx_get_peak_memory, (size_t*))                                           \
	X(int, mlx_get_cache_memory, (size_t*))                                          \
	X(int, mlx_reset_peak_memory, (void))                                            \
	X(int, mlx_clear_cache, (void))                                                  \
	X(int, mlx_load_safetensors, (mx_map*, mx_map_str*, const char*, S))             \
	X(mx_map, mlx_map_string_to_array_new, (void))                                   \
	X(int, mlx_map_string_to_array_free, (mx_map))                                   \
	X(mx_map_str, mlx_map_string_to_string_new, (void))                              \
	X(int, mlx_map_string_to_string_free, (mx_map_str))                              \
	X(mx_map_iter, mlx_map_string_to_array_iterator_new, (mx_map))                  \
	X(int, mlx_map_string_to_array_iterator_next, (const char**, A*, mx_map_iter))   \
	X(int, mlx_map_string_to_array_iterator_free, (mx_map_iter))

#define SHIM_DECLARE(ret, name, params) static ret(*p_##name) params;
SHIM_SYMBOLS(SHIM_DECLARE)

// Optional: the device API of newer mlx-c (finds CUDA GPUs too).
static mx_device (*p_mlx_device_new_type)(int, int);
static int (*p_mlx_device_is_available)(bool*, mx_device);
static int (*p_mlx_device_free)(mx_device);

static fn_binary binary_ops[SHIM_NBINARY];
static fn_unary unary_ops[SHIM_NUNARY];
static fn_reduce reduce_ops[SHIM_NREDUCE];
static int loaded;

// The last MLX error on this thread; mlx-c reports it synchronously through
// the handler on the thread that made the failing call.
static _Thread_local char last_error[2048];
static char open_error[4096];

static void on_mlx_error(const char* msg, void* data) {
	(void)data;
	snprintf(last_error, sizeof last_error, "%s", msg ? msg : "(no message)");
}

static const char* fail(int rc) {
	if (rc == 0) return NULL;
	if (last_error[0] == 0) return "MLX call failed without a message";
	return last_error;
}

#define CALL(expr) (last_error[0] = 0, fail(expr))

const char* shim_open(const char* dep_path, const char* path) {
	if (dep_path) dlopen(dep_path, RTLD_NOW | RTLD_GLOBAL); // libmlx next to libmlxc
	void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char* e = dlerror();
		snprintf(open_error, sizeof open_error, "%s", e ? e : "dlopen failed");
		return open_error;
	}
	if (loaded) return NULL;
#define SHIM_RESOLVE(ret, name, params)                                              \
	*(void**)(&p_##name) = dlsym(h, #name);                                          \
	if (!p_##name) {                                                                 \
		snprintf(open_error, sizeof open_error,                                      \
			"%s lacks %s (mlx-c too old? Perch needs mlx-c 0.6 / MLX 0.31 or newer)", \
			path, #name);                                                            \
		dlclose(h);                                                                  \
		return open_error;                                                           \
	}
	SHIM_SYMBOLS(SHIM_RESOLVE)
	*(void**)(&p_mlx_device_new_type) = dlsym(h, "mlx_device_new_type");
	*(void**)(&p_mlx_device_is_available) = dlsym(h, "mlx_device_is_available");
	*(void**)(&p_mlx_device_free) = dlsym(h, "mlx_device_free");

	binary_ops[SHIM_ADD] = p_mlx_add;
	binary_ops[SHIM_SUB] = p_mlx_subtract;
	binary_ops[SHIM_MUL] = p_mlx_multiply;
	binary_ops[SHIM_DIV] = p_mlx_divide;
	binary_ops[SHIM_MAXIMUM] = p_mlx_maximum;
	binary_ops[SHIM_MINIMUM] = p_mlx_minimum;
	binary_ops[SHIM_POW] = p_mlx_power;
	binary_ops[SHIM_EQUAL] = p_mlx_equal;
	binary_ops[SHIM_LESS] = p_mlx_less;
	binary_ops[SHIM_AND] = p_mlx_logical_and;
	binary_ops[SHIM_OR] = p_mlx_logical_or;
	binary_ops[SHIM_LOGADDEXP] = p_mlx_logaddexp;
	binary_ops[SHIM_MATMUL] = p_mlx_matmul;
	unary_ops[SHIM_TANH] = p_mlx_tanh;
	unary_ops[SHIM_EXP] = p_mlx_exp;
	unary_ops[SHIM_LOG] = p_mlx_log;
	unary_ops[SHIM_SIN] = p_mlx_sin;
	unary_ops[SHIM_COS] = p_mlx_cos;
	unary_ops[SHIM_SQRT] = p_mlx_sqrt;
	unary_ops[SHIM_RSQRT] = p_mlx_rsqrt;
	unary_ops[SHIM_SIGMOID] = p_mlx_sigmoid;
	reduce_ops[SHIM_SUM] = p_mlx_sum_axis;
	reduce_ops[SHIM_MEAN] = p_mlx_mean_axis;
	reduce_ops[SHIM_MAX] = p_mlx_max_axis;
	reduce_ops[SHIM_LOGSUMEXP] = p_mlx_logsumexp_axis;

	// The default handler prints and calls exit(); ours records the message.
	p_mlx_set_error_handler(on_mlx_error, NULL, NULL);
	loaded = 1;
	return NULL;
}

int shim_loaded(void) { return loaded; }

const char* shim_version(char* buf, int cap) {
	mx_string s = p_mlx_string_new();
	const char* err = CALL(p_mlx_version(&s));
	if (!err) snprintf(buf, cap, "%s", p_mlx_string_data(s));
	p_mlx_string_free(s);
	return err;
}

const char* shim_gpu_available(bool* res) {
	*res = false;
	if (p_mlx_device_new_type && p_mlx_device_is_available && p_mlx_device_free) {
		mx_device d = p_mlx_device_new_type(1 /* MLX_GPU */, 0);
		const char* err = CALL(p_mlx_device_is_available(res, d));
		p_mlx_device_free(d);
		return err;
	}
	return CALL(p_mlx_metal_is_available(res));
}

const char* shim_default_stream(bool gpu, mx_stream* res) {
	last_error[0] = 0;
	*res = gpu ? p_mlx_default_gpu_stream_new() : p_mlx_default_cpu_stream_new();
	if (!res->ctx) return last_error[0] ? last_error : "no default stream";
	return NULL;
}

const char* shim_stream_free(mx_stream s) { return CALL(p_mlx_stream_free(s)); }
const char* shim_synchronize(mx_stream s) { return CALL(p_mlx_synchronize(s)); }

int shim_meta(mx_array a, int* shape, int cap, int* dtype) {
	int nd = (int)p_mlx_array_ndim(a);
	const int* sh = p_mlx_array_shape(a);
	for (int i = 0; i < nd && i < cap; i++) shape[i] = sh[i];
	*dtype = p_mlx_array_dtype(a);
	return nd;
}

const char* shim_free_many(const mx_array* arrs, size_t n) {
	last_error[0] = 0;
	int rc = 0;
	for (size_t i = 0; i < n; i++) rc |= p_mlx_array_free(arrs[i]);
	return fail(rc);
}

// retype replaces *a by a cast to dtype (freeing the old handle) unless it
// already has that dtype.
static const char* retype(A* a, int dtype, S s) {
	if (p_mlx_array_dtype(*a) == dtype) return NULL;
	A out = {0};
	const char* err = CALL(p_mlx_astype(&out, *a, dtype, s));
	p_mlx_array_free(*a);
	*a = out;
	return err;
}

const char* shim_from_data(A* res, const void* data, const int* shape, int ndim,
	int src_dtype, int dst_dtype, S s) {
	last_error[0] = 0;
	*res = p_mlx_array_new_data(data, shape, ndim, src_dtype);
	if (!res->ctx) return fail(1);
	return retype(res, dst_dtype, s);
}

// shim_scalar makes a 0-d array the way MLX casts a Python scalar: through
// float32, then to dtype.
const char* shim_scalar(A* res, double v, int dtype, S s) {
	last_error[0] = 0;
	switch (dtype) {
	case MX_BOOL: *res = p_mlx_array_new_bool(v != 0); break;
	case MX_INT32: *res = p_mlx_array_new_int((int)v); break;
	default: *res = p_mlx_array_new_float((float)v);
	}
	if (!res->ctx) return fail(1);
	return retype(res, dtype, s);
}

const char* shim_zeros(A* res, const int* shape, int ndim, int dtype, S s) {
	return CALL(p_mlx_zeros(res, shape, (size_t)ndim, dtype, s));
}

const char* shim_eval(const A* arrs, size_t n, bool async) {
	last_error[0] = 0;
	mx_vector v = p_mlx_vector_array_new_data(arrs, n);
	int rc = async ? p_mlx_async_eval(v) : p_mlx_eval(v);
	p_mlx_vector_array_free(v);
	return fail(rc);
}

// readable returns a row-contiguous, evaluated copy of a in dtype.
static const char* readable(A* out, A a, int dtype, S s) {
	A t = {0};
	const char* err = CALL(p_mlx_astype(&t, a, dtype, s));
	if (err) return err;
	err = CALL(p_mlx_contiguous(out, t, false, s));
	p_mlx_array_free(t);
	if (err) return err;
	last_error[0] = 0;
	mx_vector v = p_mlx_vector_array_new_data(out, 1);
	err = fail(p_mlx_eval(v));
	p_mlx_vector_array_free(v);
	return err;
}

// read_as copies a, as dtype (float32 or int32: 4 bytes an element), to
// out, which holds n elements.
static const char* read_as(A a, int dtype, void* out, size_t n, S s) {
	A r = {0};
	const char* err = readable(&r, a, dtype, s);
	if (!err && p_mlx_array_size(r) != n) err = "readback size mismatch";
	if (!err && n > 0) {
		const void* p = dtype == MX_FLOAT32 ? (const void*)p_mlx_array_data_float32(r)
		                                    : (const void*)p_mlx_array_data_int32(r);
		if (p) memcpy(out, p, n * 4);
		else err = "array data unavailable";
	}
	p_mlx_array_free(r);
	return err;
}

const char* shim_read_f32(A a, float* out, size_t n, S s) { return read_as(a, MX_FLOAT32, out, n, s); }

const char* shim_read_i32(A a, int32_t* out, size_t n, S s) { return read_as(a, MX_INT32, out, n, s); }

const char* shim_binary(int op, A* res, A a, A b, S s) {
	return CALL(binary_ops[op](res, a, b, s));
}

const char* shim_unary(int op, A* res, A a, S s) { return CALL(unary_ops[op](res, a, s)); }

const char* shim_where(A* res, A c, A a, A b, S s) { return CALL(p_mlx_where(res, c, a, b, s)); }

const char* shim_astype(A* res, A a, int dtype, S s) {
	return CALL(p_mlx_astype(res, a, dtype, s));
}

// shim_gelu_tanh is MLX nn.gelu_approx,
// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3))), with the constants
// {0.5, 3, 0.044715, sqrt(2/pi), 1} already in x's dtype.
const char* shim_gelu_tanh(A* res, A x, const A* c, S s) {
	A t[7] = {{0}};
	const char* err = CALL(p_mlx_multiply(&t[0], c[0], x, s));          // 0.5 * x
	if (!err) err = CALL(p_mlx_power(&t[1], x, c[1], s));               // x**3
	if (!err) err = CALL(p_mlx_multiply(&t[2], c[2], t[1], s));         // 0.044715 * x**3
	if (!err) err = CALL(p_mlx_add(&t[3], x, t[2], s));                 // x + ...
	if (!err) err = CALL(p_mlx_multiply(&t[4], c[3], t[3], s));         // sqrt(2/pi) * (...)
	if (!err) err = CALL(p_mlx_tanh(&t[5], t[4], s));
	if (!err) err = CALL(p_mlx_add(&t[6], c[4], t[5], s));              // 1 + tanh
	if (!err) err = CALL(p_mlx_multiply(res, t[0], t[6], s));
	for (int i = 0; i < 7; i++) p_mlx_array_free(t[i]);
	return err;
}

const char* shim_reshape(A* res, A a, const int* shape, int n, S s) {
	return CALL(p_mlx_reshape(res, a, shape, (size_t)n, s));
}

const char* shim_transpose(A* res, A a, const int* perm, int n, S s) {
	return CALL(p_mlx_transpose_axes(res, a, perm, (size_t)n, s));
}

#define SHIM_MAXDIM 32
static const int ones[SHIM_MAXDIM] = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

const char* shim_slice(A* res, A a, const int* start, const int* stop, int n, S s) {
	if (n > SHIM_MAXDIM) return "slice: too many dimensions";
	return CALL(p_mlx_slice(res, a, start, n, stop, n, ones, n, s));
}

const char* shim_slice_update(A* res, A dst, A src, const int* start, const int* stop, int n,
	S s) {
	if (n > SHIM_MAXDIM) return "slice_update: too many dimensions";
	return CALL(p_mlx_slice_update(res, dst, src, start, n, stop, n, ones, n, s));
}

const char* shim_concat(A* res, const A* arrs, size_t n, int axis, S s) {
	last_error[0] = 0;
	mx_vector v = p_mlx_vector_array_new_data(arrs, n);
	const char* err = fail(p_mlx_concatenate_axis(res, v, axis, s));
	p_mlx_vector_array_free(v);
	return err;
}

const char* shim_pad(A* res, A a, int axis, int lo, int hi, double value, S s) {
	A pv = {0};
	const char* err = shim_scalar(&pv, value, p_mlx_array_dtype(a), s);
	if (!err) err = CALL(p_mlx_pad(res, a, &axis, 1, &lo, 1, &hi, 1, pv, "constant", s));
	p_mlx_array_free(pv);
	return err;
}

const char* shim_take(A* res, A a, A idx, int axis, bool along, S s) {
	if (along) return CALL(p_mlx_take_along_axis(res, a, idx, axis, s));
	return CALL(p_mlx_take_axis(res, a, idx, axis, s));
}

const char* shim_reduce(int op, A* res, A a, int axis, bool keepdims, S s) {
	return CALL(reduce_ops[op](res, a, axis, keepdims, s));
}

const char* shim_softmax(A* res, A a, int axis, S s) {
	return CALL(p_mlx_softmax_axis(res, a, axis, true, s));
}

const char* shim_cumsum(A* res, A a, int axis, S s) {
	return CALL(p_mlx_cumsum(res, a, axis, false, true, s));
}

// shim_argop runs argmax/argsort/argpartition and returns int32 indices
// (MLX returns uint32).
const char* shim_argop(int op, A* res, A a, int kth, int axis, S s) {
	const char* err;
	switch (op) {
	case SHIM_ARGMAX: err = CALL(p_mlx_argmax_axis(res, a, axis, false, s)); break;
	case SHIM_ARGSORT: err = CALL(p_mlx_argsort_axis(res, a, axis, s)); break;
	default: err = CALL(p_mlx_argpartition_axis(res, a, kth, axis, s));
	}
	if (err) return err;
	return retype(res, MX_INT32, s);
}

const char* shim_categorical(A* res, A logits, uint64_t seed, S s) {
	A key = {0};
	const char* err = CALL(p_mlx_random_key(&key, seed));
	if (!err) err = CALL(p_mlx_random_categorical(res, logits, -1, key, s));
	p_mlx_array_free(key);
	if (err) return err;
	return retype(res, MX_INT32, s);
}

static mx_opt_int opt_int(int v) { mx_opt_int o = {v, true}; return o; }

// shim_linear is mlx.nn.Linear (addmm with the bias, else x @ W.T) or
// mlx.nn.QuantizedLinear (quantized_matmul, then + bias).
const char* shim_linear(A* res, A x, A w, A scales, A biases, A bias, int bits, int group_size,
	S s) {
	const char* err;
	if (bits != 0) {
		if (!bias.ctx)
			return CALL(p_mlx_quantized_matmul(res, x, w, scales, biases, true,
				opt_int(group_size), opt_int(bits), "affine", s));
		A y = {0};
		err = CALL(p_mlx_quantized_matmul(&y, x, w, scales, biases, true,
			opt_int(group_size), opt_int(bits), "affine", s));
		if (!err) err = CALL(p_mlx_add(res, y, bias, s));
		p_mlx_array_free(y);
		return err;
	}
	A t = {0};
	err = CALL(p_mlx_swapaxes(&t, w, -1, -2, s));
	if (!err) {
		if (bias.ctx) err = CALL(p_mlx_addmm(res, bias, x, t, 1.0f, 1.0f, s));
		else err = CALL(p_mlx_matmul(res, x, t, s));
	}
	p_mlx_array_free(t);
	return err;
}

// shim_gather_linear is mlx-vlm's SwitchLinear / QuantizedSwitchLinear:
// x [N, K|1, In] -> [N, K|1, 1, In] @ W[idx].T -> [N, K, 1, Out] -> [N, K, Out].
const char* shim_gather_linear(A* res, A x, A w, A scales, A biases, A bias, A idx, int bits,
	int group_size, S s) {
	A t[4] = {{0}};
	const char* err = CALL(p_mlx_expand_dims(&t[0], x, -2, s));
	if (!err) {
		if (bits != 0) {
			A none = {0};
			err = CALL(p_mlx_gather_qmm(&t[1], t[0], w, scales, biases, none, idx, true,
				opt_int(group_size), opt_int(bits), "affine", false, s));
		} else {
			A none = {0};
			err = CALL(p_mlx_swapaxes(&t[3], w, -1, -2, s));
			if (!err) err = CALL(p_mlx_gather_mm(&t[1], t[0], t[3], none, idx, false, s));
		}
	}
	if (!err && bias.ctx) {
		// bias [E, Out] per expert -> [N, K, 1, Out]
		A bt = {0}, be = {0};
		err = CALL(p_mlx_take_axis(&bt, bias, idx, 0, s));
		if (!err) err = CALL(p_mlx_expand_dims(&be, bt, -2, s));
		if (!err) err = CALL(p_mlx_add(&t[2], t[1], be, s));
		p_mlx_array_free(bt);
		p_mlx_array_free(be);
		if (!err) {
			p_mlx_array_free(t[1]);
			t[1] = t[2];
			t[2].ctx = 0;
		}
	}
	if (!err) err = CALL(p_mlx_squeeze_axis(res, t[1], -2, s));
	for (int i = 0; i < 4; i++) p_mlx_array_free(t[i]);
	return err;
}

// shim_embedding is mlx.nn.Embedding (take rows) or QuantizedEmbedding
// (dequantize(w[ids], scales[ids], biases[ids])).
const char* shim_embedding(A* res, A w, A scales, A biases, A ids, int bits, int group_size,
	S s) {
	if (bits == 0) return CALL(p_mlx_take_axis(res, w, ids, 0, s));
	A t[3] = {{0}};
	const char* err = CALL(p_mlx_take_axis(&t[0], w, ids, 0, s));
	if (!err) err = CALL(p_mlx_take_axis(&t[1], scales, ids, 0, s));
	if (!err) err = CALL(p_mlx_take_axis(&t[2], biases, ids, 0, s));
	if (!err) {
		A none = {0};
		mx_opt_dtype dt = {0, false};
		err = CALL(p_mlx_dequantize(res, t[0], t[1], t[2], opt_int(group_size), opt_int(bits),
			"affine", none, dt, s));
	}
	for (int i = 0; i < 3; i++) p_mlx_array_free(t[i]);
	return err;
}

const char* shim_rms_norm(A* res, A x, A w, float eps, S s) {
	return CALL(p_mlx_fast_rms_norm(res, x, w, eps, s));
}

const char* shim_layer_norm(A* res, A x, A w, A b, float eps, S s) {
	return CALL(p_mlx_fast_layer_norm(res, x, w, b, eps, s));
}

const char* shim_rope(A* res, A x, int dims, bool traditional, bool has_base, float base,
	float scale, int offset, A freqs, S s) {
	mx_opt_float b = {base, has_base};
	return CALL(p_mlx_fast_rope(res, x, dims, traditional, b, scale, offset, freqs, s));
}

const char* shim_sdpa(A* res, A q, A k, A v, float scale, int mask_kind, A mask, S s) {
	static const char* modes[] = {"", "causal", "array"};
	if (mask_kind < 0 || mask_kind > 2) return "sdpa: unknown mask kind";
	A sinks = {0};
	return CALL(p_mlx_fast_scaled_dot_product_attention(res, q, k, v, scale, modes[mask_kind],
		mask, sinks, s));
}

const char* shim_conv(A* res, A x, A w, int ndim, int stride0, int stride1, int pad0, int pad1,
	int groups, S s) {
	if (ndim == 1) return CALL(p_mlx_conv1d(res, x, w, stride0, pad0, 1, groups, s));
	return CALL(p_mlx_conv2d(res, x, w, stride0, stride1, pad0, pad1, 1, 1, groups, s));
}

const char* shim_memory(int which, size_t* res) {
	switch (which) {
	case SHIM_MEM_ACTIVE: return CALL(p_mlx_get_active_memory(res));
	case SHIM_MEM_PEAK: return CALL(p_mlx_get_peak_memory(res));
	default: return CALL(p_mlx_get_cache_memory(res));
	}
}

const char* shim_reset_peak(void) { return CALL(p_mlx_reset_peak_memory()); }
const char* shim_clear_cache(void) { return CALL(p_mlx_clear_cache()); }

// shim_load_safetensors maps the file lazily; MLX's Load runs on the CPU stream.
const char* shim_load_safetensors(const char* path, mx_map* res) {
	mx_map_str meta = p_mlx_map_string_to_string_new();
	S cpu = p_mlx_default_cpu_stream_new();
	*res = p_mlx_map_string_to_array_new();
	const char* err = CALL(p_mlx_load_safetensors(res, &meta, path, cpu));
	p_mlx_stream_free(cpu);
	p_mlx_map_string_to_string_free(meta);
	return err;
}

const char* shim_map_iter_new(mx_map m, mx_map_iter* res) {
	last_error[0] = 0;
	*res = p_mlx_map_string_to_array_iterator_new(m);
	return res->ctx ? NULL : fail(1);
}

const char* shim_map_next(mx_map_iter it, const char** key, A* value, bool* done) {
	last_error[0] = 0;
	int rc = p_mlx_map_string_to_array_iterator_next(key, value, it);
	*done = rc == 2;
	return rc == 2 ? NULL : fail(rc);
}

void shim_map_free(mx_map m, mx_map_iter it) {
	if (it.ctx) p_mlx_map_string_to_array_iterator_free(it);
	if (m.ctx) p_mlx_map_string_to_array_free(m);
}

// Training: the transposes of shim_linear and shim_gather_linear without
// the bias, dy @ W (quantized_matmul / gather_qmm with transpose false).
const char* shim_linear_t(A* res, A dy, A w, A scales, A biases, int bits, int group_size, S s) {
	if (bits != 0)
		return CALL(p_mlx_quantized_matmul(res, dy, w, scales, biases, false, opt_int(group_size),
			opt_int(bits), "affine", s));
	return CALL(p_mlx_matmul(res, dy, w, s));
}

// dy [N, K, Out] -> [N, K, 1, Out] @ W[idx] -> [N, K, 1, In] -> [N, K, In].
const char* shim_gather_linear_t(A* res, A dy, A w, A scales, A biases, A idx, int bits,
	int group_size, S s) {
	A t[2] = {{0}};
	A none = {0};
	const char* err = CALL(p_mlx_expand_dims(&t[0], dy, -2, s));
	if (!err) {
		if (bits != 0)
			err = CALL(p_mlx_gather_qmm(&t[1], t[0], w, scales, biases, none, idx, false,
				opt_int(group_size), opt_int(bits), "affine", false, s));
		else
			err = CALL(p_mlx_gather_mm(&t[1], t[0], w, none, idx, false, s));
	}
	if (!err) err = CALL(p_mlx_squeeze_axis(res, t[1], -2, s));
	for (int i = 0; i < 2; i++) p_mlx_array_free(t[i]);
	return err;
}
