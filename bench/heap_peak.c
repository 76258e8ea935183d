// Peak heap bytes in use by a process, for comparing the memory of two builds of the same program
// (bench/run_first_order_cost.sh): loaded with LD_PRELOAD, it wraps glibc's allocation functions, keeps the
// bytes of every live block (malloc_usable_size) and their maximum, and at exit writes that maximum, in bytes,
// to the file named by HEAP_PEAK_FILE. Unlike the peak resident set it does not depend on which freed pages the
// allocator happens to keep or return, so the same work gives the same number run after run. Memory mapped
// outside malloc (OpenBLAS's buffers, thread stacks) is not counted.
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

extern void* __libc_malloc(size_t size);
extern void* __libc_calloc(size_t n, size_t size);
extern void* __libc_realloc(void* p, size_t size);
extern void* __libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void* p);

static atomic_size_t live_bytes;
static atomic_size_t peak_bytes;

static void* counted(void* p) {
  if (p) {
    const size_t now = atomic_fetch_add(&live_bytes, malloc_usable_size(p)) + malloc_usable_size(p);
    size_t peak = atomic_load(&peak_bytes);
    while (now > peak && !atomic_compare_exchange_weak(&peak_bytes, &peak, now)) {
    }
  }
  return p;
}

static void uncount(void* p) {
  if (p) atomic_fetch_sub(&live_bytes, malloc_usable_size(p));
}

void* malloc(size_t size) { return counted(__libc_malloc(size)); }
void* calloc(size_t n, size_t size) { return counted(__libc_calloc(n, size)); }
void* memalign(size_t alignment, size_t size) { return counted(__libc_memalign(alignment, size)); }
void* aligned_alloc(size_t alignment, size_t size) { return counted(__libc_memalign(alignment, size)); }

void* realloc(void* p, size_t size) {
  uncount(p);
  void* q = __libc_realloc(p, size);
  if (!q && p && size) counted(p);  // failed: p is still live
  return counted(q);
}

int posix_memalign(void** out, size_t alignment, size_t size) {
  void* p = counted(__libc_memalign(alignment, size));
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

void free(void* p) {
  uncount(p);
  __libc_free(p);
}

__attribute__((destructor)) static void write_peak(void) {
  const char* path = getenv("HEAP_PEAK_FILE");
  if (!path) return;
  FILE* f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "%zu\n", (size_t)atomic_load(&peak_bytes));
  fclose(f);
}
