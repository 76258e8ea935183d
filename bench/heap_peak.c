// Peak heap bytes in use by a process, for comparing the memory of two builds of the same program
// (bench/run_first_order_cost.sh): loaded with LD_PRELOAD, it wraps glibc's allocation functions, keeps the
// bytes of every live block (malloc_usable_size) and their maximum, and at exit writes that maximum, in bytes,
// to the file named by HEAP_PEAK_FILE. Unlike the peak resident set it does not depend on which freed pages the
// allocator happens to keep or return, so the same work gives the same number run after run. It also counts the
// private anonymous mappings that the program itself makes (mmap called from the executable, not from a shared
// library), and follows munmap and mremap of parts of them: rematch's host blocks of 1 MiB and more are mapped
// directly (tensor/storage.cpp), and a build before that took them from malloc. Other memory mapped outside
// malloc (OpenBLAS's buffers, thread stacks, glibc's own large chunks) is not counted.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>
#include <malloc.h>
#include <stdarg.h>
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

// The program's own anonymous mappings, as address ranges (a small table: rematch keeps a few hundred blocks at
// most), so that munmap and mremap uncount only what mmap counted, and by the bytes they cover: the host block
// cache (tensor/storage.cpp) hands out the head of a cached block and unmaps parts of mappings, and moves blocks
// next to each other with mremap. A range mapped without access (PROT_NONE: an address range only) is not
// counted; pages moved into it are, once, where they land.
#define MAPPINGS 65536
static char* map_start[MAPPINGS];
static size_t map_length[MAPPINGS];
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;

static void note_peak(size_t now) {
  size_t peak = atomic_load(&peak_bytes);
  while (now > peak && !atomic_compare_exchange_weak(&peak_bytes, &peak, now)) {
  }
}

// Counts [p, p + length). Called with map_lock held.
static void track(char* p, size_t length) {
  for (int i = 0; i < MAPPINGS; ++i)
    if (!map_start[i]) {
      map_start[i] = p, map_length[i] = length;
      note_peak(atomic_fetch_add(&live_bytes, length) + length);
      return;
    }
}

// Uncounts the tracked bytes within [p, p + length), trimming or splitting the ranges it overlaps; returns
// whether any were. Called with map_lock held.
static int untrack(char* p, size_t length) {
  char* const end = p + length;
  int found = 0;
  for (int i = 0; i < MAPPINGS; ++i) {
    char* const s = map_start[i];
    if (!s) continue;
    char* const e = s + map_length[i];
    if (e <= p || s >= end) continue;
    found = 1;
    char* const lo = s > p ? s : p;
    char* const hi = e < end ? e : end;
    atomic_fetch_sub(&live_bytes, (size_t)(hi - lo));
    map_start[i] = 0;
    if (s < lo) map_start[i] = s, map_length[i] = (size_t)(lo - s);  // the part before stays
    if (hi < e) {                                                      // the part after stays
      if (map_start[i]) {
        for (int j = 0; j < MAPPINGS; ++j)
          if (!map_start[j]) {
            map_start[j] = hi, map_length[j] = (size_t)(e - hi);
            break;
          }
      } else {
        map_start[i] = hi, map_length[i] = (size_t)(e - hi);
      }
    }
  }
  return found;
}

// The main program's link map is the one with an empty name.
static int from_executable(void* caller) {
  Dl_info info;
  struct link_map* map = 0;
  return dladdr1(caller, &info, (void**)&map, RTLD_DL_LINKMAP) && map && map->l_name && map->l_name[0] == '\0';
}

void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  static void* (*real)(void*, size_t, int, int, int, off_t);
  if (!real) real = (void* (*)(void*, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
  void* p = real(addr, length, prot, flags, fd, offset);
  if (p != MAP_FAILED && (flags & MAP_ANONYMOUS) && !(flags & (MAP_SHARED | MAP_STACK)) &&
      from_executable(__builtin_return_address(0))) {
    pthread_mutex_lock(&map_lock);
    if (flags & MAP_FIXED) untrack((char*)p, length);  // what it replaces
    if (prot != PROT_NONE) track((char*)p, length);
    pthread_mutex_unlock(&map_lock);
  }
  return p;
}

int munmap(void* addr, size_t length) {
  static int (*real)(void*, size_t);
  if (!real) real = (int (*)(void*, size_t))dlsym(RTLD_NEXT, "munmap");
  pthread_mutex_lock(&map_lock);
  untrack((char*)addr, length);
  pthread_mutex_unlock(&map_lock);
  return real(addr, length);
}

void* mremap(void* old, size_t old_length, size_t new_length, int flags, ...) {
  static void* (*real)(void*, size_t, size_t, int, ...);
  if (!real) real = (void* (*)(void*, size_t, size_t, int, ...))dlsym(RTLD_NEXT, "mremap");
  void* wanted = 0;
  if (flags & MREMAP_FIXED) {
    va_list args;
    va_start(args, flags);
    wanted = va_arg(args, void*);
    va_end(args);
  }
  void* p = (flags & MREMAP_FIXED) ? real(old, old_length, new_length, flags, wanted)
                                   : real(old, old_length, new_length, flags);
  if (p != MAP_FAILED) {
    pthread_mutex_lock(&map_lock);
    if (untrack((char*)old, old_length)) {  // only what mmap counted moves
      untrack((char*)p, new_length);        // what MREMAP_FIXED replaced
      track((char*)p, new_length);
    }
    pthread_mutex_unlock(&map_lock);
  }
  return p;
}

__attribute__((destructor)) static void write_peak(void) {
  const char* path = getenv("HEAP_PEAK_FILE");
  if (!path) return;
  FILE* f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "%zu\n", (size_t)atomic_load(&peak_bytes));
  fclose(f);
}
