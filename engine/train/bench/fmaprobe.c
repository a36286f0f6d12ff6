// The machine's float32 FMA peak for the training benchmark: every thread
// runs independent chains of 8-wide (AVX2) or 16-wide (AVX-512) fused
// multiply-adds from registers, long enough that timing noise is small.
// Prints {"threads": N, "avx2_gflops": X, "avx512_gflops": Y or null}.
// Build: cc -O2 -pthread fmaprobe.c (ISA chosen per function at run time).
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define CHAINS 12
// every chain written out, so the accumulators stay in registers
#define UNROLL(f) \
	acc[0] = f(acc[0], a, b); acc[1] = f(acc[1], a, b); acc[2] = f(acc[2], a, b); \
	acc[3] = f(acc[3], a, b); acc[4] = f(acc[4], a, b); acc[5] = f(acc[5], a, b); \
	acc[6] = f(acc[6], a, b); acc[7] = f(acc[7], a, b); acc[8] = f(acc[8], a, b); \
	acc[9] = f(acc[9], a, b); acc[10] = f(acc[10], a, b); acc[11] = f(acc[11], a, b);
static long iters = 20000000;
static volatile float sink;

__attribute__((target("avx2,fma"))) static void *avx2(void *arg) {
	__m256 acc[CHAINS], a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
	for (int c = 0; c < CHAINS; c++) acc[c] = _mm256_set1_ps((float)c);
	for (long i = 0; i < iters; i++) {
		UNROLL(_mm256_fmadd_ps)
	}
	float s = 0;
	for (int c = 0; c < CHAINS; c++) s += _mm256_cvtss_f32(acc[c]);
	sink = s;
	return arg;
}

__attribute__((target("avx512f"))) static void *avx512(void *arg) {
	__m512 acc[CHAINS], a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
	for (int c = 0; c < CHAINS; c++) acc[c] = _mm512_set1_ps((float)c);
	for (long i = 0; i < iters; i++) {
		UNROLL(_mm512_fmadd_ps)
	}
	float s = 0;
	for (int c = 0; c < CHAINS; c++) s += _mm512_reduce_add_ps(acc[c]);
	sink = s;
	return arg;
}

static double run(void *(*fn)(void *), int threads, int lanes) {
	pthread_t t[256];
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, fn, NULL);
	for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	return 2.0 * lanes * CHAINS * (double)iters * threads / s / 1e9;
}

int main(int argc, char **argv) {
	int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (argc > 1) threads = atoi(argv[1]);
	if (threads < 1 || threads > 256) threads = 1;
	__builtin_cpu_init();
	double a2 = __builtin_cpu_supports("fma") ? run(avx2, threads, 8) : 0;
	printf("{\"threads\": %d, \"avx2_gflops\": %.1f, \"avx512_gflops\": ", threads, a2);
	if (__builtin_cpu_supports("avx512f"))
		printf("%.1f}\n", run(avx512, threads, 16));
	else
		printf("null}\n");
	return 0;
}
