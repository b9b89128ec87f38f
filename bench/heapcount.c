/* heapcount: an LD_PRELOAD heap allocation counter for the benchmark (bench/run.py).
 *
 * Built by bench/heapcount.py with `cc -shared -fPIC -O2 heapcount.c -o heapcount.so -ldl` and
 * loaded into every writer of a heap-measured run with LD_PRELOAD. It wraps the C allocator
 * (malloc, calloc, realloc, free, posix_memalign, aligned_alloc, memalign, valloc, pvalloc,
 * malloc_usable_size); C++'s operator new/delete (libstdc++) and Rust's System allocator call
 * these, so ROOT, our Rust code and Python's extensions are all seen the same way.
 *
 * Every block carries a 16-byte header in front of the pointer handed out:
 *
 *     real block (from the next allocator)
 *     |<- pad (aligned blocks only) ->|<- u64 requested size ->|<- u32 offset ->|<- u32 magic ->|<- user data
 *                                                                                              ^ pointer returned
 *
 * so live bytes are the bytes requested (not the allocator's rounding), exactly, for every
 * allocation function including the aligned ones; `offset` leads free() back to the real block.
 * A pointer whose header lacks the magic was not allocated through the counter (glibc's own
 * chunk header has zero there) and is passed to the next free() untouched.
 *
 * Figures (atomics, no locks, nothing allocated inside a hook):
 *   total_bytes   bytes requested by malloc/calloc/realloc/... (a realloc counts its new size)
 *   calls         allocation calls (realloc included; free not)
 *   frees         free calls of counted blocks
 *   live          bytes requested and not yet freed
 *   peak          the highest `live` since the last mark
 *   hist          per power of two of the requested size: [log2 bucket, calls, bytes]
 *
 * Output: one JSON line appended to the file named by HEAPCOUNT_OUT
 *   - at each mark: `heapcount_mark()` (call it through dlsym / ctypes) or SIGUSR1 (installed
 *     only when HEAPCOUNT_OUT is set); the line has "event": "mark" and the figures of the phase
 *     since the previous mark (peak and hist are reset after the line is written: a mark starts a
 *     new phase; total_bytes/calls/frees/live are running totals);
 *   - at exit ("event": "exit").
 * A timed section bracketed by two marks therefore gives: peak heap during the section =
 * mark2.peak, heap above the input = mark2.peak - mark1.live, bytes requested in the section =
 * mark2.total_bytes - mark1.total_bytes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HEADER 16u
#define MAGIC 0x48435430u /* "HCT0" */
#define BUCKETS 64

struct header {
   uint64_t size;
   uint32_t offset;
   uint32_t magic;
};

static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);

static atomic_ullong total_bytes, calls, frees, live, peak, marks;
static atomic_ullong hist_calls[BUCKETS], hist_bytes[BUCKETS];
static atomic_int resolving;

/* Allocations made while dlsym resolves the next allocator (glibc's dlsym may calloc): served
 * from this arena, never freed. */
static char boot_arena[64 * 1024] __attribute__((aligned(16)));
static atomic_size_t boot_used;

static int in_boot(const void *p)
{
   return (const char *)p >= boot_arena && (const char *)p < boot_arena + sizeof boot_arena;
}

static void *boot_alloc(size_t n)
{
   size_t need = (n + 15u) & ~(size_t)15u;
   size_t at = atomic_fetch_add(&boot_used, need);
   if (at + need > sizeof boot_arena)
      return NULL;
   return boot_arena + at; /* zeroed: static storage, never reused */
}

static void resolve(void)
{
   if (next_free)
      return;
   atomic_store(&resolving, 1);
   next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
   next_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
   next_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
   next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
   atomic_store(&resolving, 0);
}

static unsigned bucket(uint64_t n)
{
   return n ? 63u - (unsigned)__builtin_clzll(n) : 0u;
}

static void count_alloc(uint64_t n)
{
   atomic_fetch_add_explicit(&total_bytes, n, memory_order_relaxed);
   atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
   unsigned b = bucket(n);
   atomic_fetch_add_explicit(&hist_calls[b], 1, memory_order_relaxed);
   atomic_fetch_add_explicit(&hist_bytes[b], n, memory_order_relaxed);
   uint64_t now = atomic_fetch_add_explicit(&live, n, memory_order_relaxed) + n;
   uint64_t p = atomic_load_explicit(&peak, memory_order_relaxed);
   while (now > p && !atomic_compare_exchange_weak_explicit(&peak, &p, now, memory_order_relaxed,
                                                            memory_order_relaxed)) {
   }
}

static struct header *header_of(void *user)
{
   return (struct header *)((char *)user - HEADER);
}

/* Writes the header in front of `user` (inside the real block `real`) and counts `n` bytes. */
static void *finish(void *real, void *user, size_t n)
{
   struct header *h = header_of(user);
   h->size = n;
   h->offset = (uint32_t)((char *)user - (char *)real);
   h->magic = MAGIC;
   count_alloc(n);
   return user;
}

static int counted(void *user)
{
   return header_of(user)->magic == MAGIC;
}

static void *real_block(void *user)
{
   return (char *)user - header_of(user)->offset;
}

static void release(void *user)
{
   struct header *h = header_of(user);
   atomic_fetch_sub_explicit(&live, h->size, memory_order_relaxed);
   atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
   h->magic = 0; /* a double free is passed on as foreign, where glibc reports it */
}

void *malloc(size_t n)
{
   if (!next_malloc) {
      if (atomic_load(&resolving))
         return boot_alloc(n);
      resolve();
   }
   if (n > SIZE_MAX - HEADER) {
      errno = ENOMEM;
      return NULL;
   }
   char *real = next_malloc(n + HEADER);
   return real ? finish(real, real + HEADER, n) : NULL;
}

void *calloc(size_t count, size_t size)
{
   size_t n;
   if (__builtin_mul_overflow(count, size, &n) || n > SIZE_MAX - HEADER) {
      errno = ENOMEM;
      return NULL;
   }
   if (!next_calloc) {
      if (atomic_load(&resolving))
         return boot_alloc(n); /* dlsym's own buffers */
      resolve();
   }
   /* calloc of the whole block: the header is overwritten; the next allocator keeps its
      zeroing shortcuts for fresh pages */
   char *real = next_calloc(1, n + HEADER);
   return real ? finish(real, real + HEADER, n) : NULL;
}

void free(void *p)
{
   if (!p || in_boot(p))
      return;
   resolve();
   if (!counted(p)) {
      next_free(p);
      return;
   }
   void *real = real_block(p);
   release(p);
   next_free(real);
}

static void *aligned(size_t align, size_t n)
{
   if (!next_malloc)
      resolve();
   if (align < HEADER)
      align = HEADER;
   if (n > SIZE_MAX - HEADER - align || align > (1u << 30)) {
      errno = ENOMEM;
      return NULL;
   }
   char *real = next_malloc(n + HEADER + align);
   if (!real)
      return NULL;
   uintptr_t user = ((uintptr_t)real + HEADER + align - 1) & ~(uintptr_t)(align - 1);
   return finish(real, (void *)user, n);
}

static int power_of_two(size_t a)
{
   return a && !(a & (a - 1));
}

void *realloc(void *p, size_t n)
{
   if (!p)
      return malloc(n);
   if (in_boot(p)) { /* from the bootstrap arena: copy what fits */
      char *q = malloc(n);
      if (q) {
         size_t room = (size_t)(boot_arena + sizeof boot_arena - (char *)p);
         memcpy(q, p, n < room ? n : room);
      }
      return q;
   }
   resolve();
   if (!counted(p))
      return next_realloc(p, n);
   if (n == 0) {
      free(p);
      return NULL;
   }
   if (n > SIZE_MAX - HEADER) {
      errno = ENOMEM;
      return NULL;
   }
   struct header *h = header_of(p);
   if (h->offset != HEADER) { /* an aligned block: a plain one replaces it */
      char *q = malloc(n);
      if (q) {
         memcpy(q, p, h->size < n ? h->size : n);
         free(p);
      }
      return q;
   }
   uint64_t old = h->size;
   char *real = next_realloc((char *)p - HEADER, n + HEADER);
   if (!real)
      return NULL; /* the old block is intact and still counted */
   atomic_fetch_sub_explicit(&live, old, memory_order_relaxed);
   return finish(real, real + HEADER, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
   if (!power_of_two(align) || align % sizeof(void *))
      return EINVAL;
   void *p = aligned(align, n);
   if (!p)
      return ENOMEM;
   *out = p;
   return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
   if (!power_of_two(align)) {
      errno = EINVAL;
      return NULL;
   }
   return aligned(align, n);
}

void *memalign(size_t align, size_t n)
{
   if (!power_of_two(align)) {
      errno = EINVAL;
      return NULL;
   }
   return aligned(align, n);
}

void *valloc(size_t n)
{
   return aligned((size_t)sysconf(_SC_PAGESIZE), n);
}

void *pvalloc(size_t n)
{
   size_t page = (size_t)sysconf(_SC_PAGESIZE);
   return aligned(page, (n + page - 1) & ~(page - 1));
}

size_t malloc_usable_size(void *p)
{
   if (!p || in_boot(p) || !counted(p))
      return 0;
   return header_of(p)->size;
}

/* ---- output: async-signal-safe (write(2) and hand-made numbers only) ---- */

struct line {
   char buf[4096];
   size_t len;
};

static void put(struct line *l, const char *s)
{
   while (*s && l->len < sizeof l->buf - 2)
      l->buf[l->len++] = *s++;
}

static void put_u64(struct line *l, uint64_t v)
{
   char tmp[24];
   int i = 0;
   do {
      tmp[i++] = (char)('0' + v % 10);
      v /= 10;
   } while (v);
   while (i && l->len < sizeof l->buf - 2)
      l->buf[l->len++] = tmp[--i];
}

static void field(struct line *l, const char *name, uint64_t v)
{
   put(l, ", \"");
   put(l, name);
   put(l, "\": ");
   put_u64(l, v);
}

/* $HEAPCOUNT_OUT, read once at start-up (getenv is no function for a signal handler) */
static const char *out_path;

static void emit(const char *event)
{
   const char *path = out_path;
   struct line l = {.len = 0};
   uint64_t now = atomic_load(&live);
   put(&l, "{\"event\": \"");
   put(&l, event);
   put(&l, "\"");
   field(&l, "mark", atomic_load(&marks));
   field(&l, "pid", (uint64_t)getpid());
   field(&l, "total_bytes", atomic_load(&total_bytes));
   field(&l, "calls", atomic_load(&calls));
   field(&l, "frees", atomic_load(&frees));
   field(&l, "live", now);
   field(&l, "peak", atomic_load(&peak));
   put(&l, ", \"hist\": [");
   int first = 1;
   for (unsigned b = 0; b < BUCKETS; ++b) {
      uint64_t c = atomic_load(&hist_calls[b]);
      if (!c)
         continue;
      put(&l, first ? "[" : ", [");
      first = 0;
      put_u64(&l, b);
      put(&l, ", ");
      put_u64(&l, c);
      put(&l, ", ");
      put_u64(&l, atomic_load(&hist_bytes[b]));
      put(&l, "]");
   }
   put(&l, "]}\n");
   if (!path || !*path)
      return;
   int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
   if (fd < 0)
      return;
   size_t off = 0;
   while (off < l.len) {
      ssize_t w = write(fd, l.buf + off, l.len - off);
      if (w <= 0)
         break;
      off += (size_t)w;
   }
   close(fd);
}

/* Writes a "mark" line with the figures of the phase since the previous mark, then starts a new
   phase: peak = live, histogram cleared. */
void heapcount_mark(void)
{
   int saved = errno;
   atomic_fetch_add(&marks, 1);
   emit("mark");
   atomic_store(&peak, atomic_load(&live));
   for (unsigned b = 0; b < BUCKETS; ++b) {
      atomic_store(&hist_calls[b], 0);
      atomic_store(&hist_bytes[b], 0);
   }
   errno = saved;
}

static void on_signal(int sig)
{
   (void)sig;
   heapcount_mark();
}

__attribute__((constructor)) static void heapcount_init(void)
{
   resolve();
   out_path = getenv("HEAPCOUNT_OUT");
   if (out_path && *out_path) {
      struct sigaction sa;
      memset(&sa, 0, sizeof sa);
      sa.sa_handler = on_signal;
      sa.sa_flags = SA_RESTART;
      sigemptyset(&sa.sa_mask);
      sigaction(SIGUSR1, &sa, NULL);
   }
}

__attribute__((destructor)) static void heapcount_fini(void)
{
   emit("exit");
}
