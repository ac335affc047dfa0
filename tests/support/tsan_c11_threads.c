// C11 threads (<threads.h>) on top of pthreads, for ThreadSanitizer builds only
// (scripts/tsan.sh). Debian's librdkafka creates its threads and takes its
// locks with glibc's C11 functions, which call glibc's pthread code internally,
// past the pthread_* interceptors of GCC 12's TSan runtime (it has none for C11
// threads). Without this, librdkafka's threads are unknown to TSan, which
// crashes in the first allocation one of them makes, and its mutexes and
// condition variables order nothing for TSan. Defined here, these functions
// come before libc's, and each calls the pthread function glibc's own would,
// so TSan sees them. Same types and results as glibc's nptl/thrd_*.c and
// mtx_*.c, cnd_*.c: thrd_t is a pthread_t, mtx_t and cnd_t hold a
// pthread_mutex_t and pthread_cond_t, once_flag a pthread_once_t.
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <threads.h>

static int ThrdResult(int err) {
  switch (err) {
    case 0:
      return thrd_success;
    case ENOMEM:
      return thrd_nomem;
    case ETIMEDOUT:
      return thrd_timedout;
    case EBUSY:
      return thrd_busy;
    default:
      return thrd_error;
  }
}

struct Start {
  thrd_start_t func;
  void* arg;
};

// The start function's int comes back through the void*, as in glibc.
static void* RunStart(void* p) {
  struct Start start = *(struct Start*)p;
  free(p);
  return (void*)(intptr_t)start.func(start.arg);
}

int thrd_create(thrd_t* thr, thrd_start_t func, void* arg) {
  struct Start* start = malloc(sizeof *start);
  if (start == NULL) return thrd_nomem;
  start->func = func;
  start->arg = arg;
  int err = pthread_create(thr, NULL, RunStart, start);
  if (err != 0) free(start);
  return ThrdResult(err);
}

int thrd_join(thrd_t thr, int* res) {
  void* result;
  int err = pthread_join(thr, &result);
  if (err == 0 && res != NULL) *res = (int)(intptr_t)result;
  return ThrdResult(err);
}

int thrd_detach(thrd_t thr) { return ThrdResult(pthread_detach(thr)); }

int mtx_init(mtx_t* mutex, int type) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, (type & mtx_recursive)
                                       ? PTHREAD_MUTEX_RECURSIVE
                                       : PTHREAD_MUTEX_NORMAL);
  int err = pthread_mutex_init((pthread_mutex_t*)mutex, &attr);
  pthread_mutexattr_destroy(&attr);
  return ThrdResult(err);
}

int mtx_lock(mtx_t* mutex) {
  return ThrdResult(pthread_mutex_lock((pthread_mutex_t*)mutex));
}

int mtx_trylock(mtx_t* mutex) {
  return ThrdResult(pthread_mutex_trylock((pthread_mutex_t*)mutex));
}

int mtx_timedlock(mtx_t* restrict mutex,
                  const struct timespec* restrict time_point) {
  return ThrdResult(
      pthread_mutex_timedlock((pthread_mutex_t*)mutex, time_point));
}

int mtx_unlock(mtx_t* mutex) {
  return ThrdResult(pthread_mutex_unlock((pthread_mutex_t*)mutex));
}

void mtx_destroy(mtx_t* mutex) {
  pthread_mutex_destroy((pthread_mutex_t*)mutex);
}

int cnd_init(cnd_t* cond) {
  return ThrdResult(pthread_cond_init((pthread_cond_t*)cond, NULL));
}

int cnd_signal(cnd_t* cond) {
  return ThrdResult(pthread_cond_signal((pthread_cond_t*)cond));
}

int cnd_broadcast(cnd_t* cond) {
  return ThrdResult(pthread_cond_broadcast((pthread_cond_t*)cond));
}

int cnd_wait(cnd_t* cond, mtx_t* mutex) {
  return ThrdResult(
      pthread_cond_wait((pthread_cond_t*)cond, (pthread_mutex_t*)mutex));
}

int cnd_timedwait(cnd_t* restrict cond, mtx_t* restrict mutex,
                  const struct timespec* restrict time_point) {
  return ThrdResult(pthread_cond_timedwait(
      (pthread_cond_t*)cond, (pthread_mutex_t*)mutex, time_point));
}

void cnd_destroy(cnd_t* cond) { pthread_cond_destroy((pthread_cond_t*)cond); }

void call_once(once_flag* flag, void (*func)(void)) {
  pthread_once((pthread_once_t*)flag, func);
}
