//go:build linux && cgo

package main

// The C heap (SQLite's page caches, statements and schemas) is glibc's
// malloc. glibc gives a thread that finds the heap's lock taken an arena
// of its own, up to eight per core, and memory freed in one arena serves
// only that arena: under a flood, with a dozen threads in SQLite, the
// arenas each grew to a few megabytes and held 35–40 MB between them
// (doc/benchmarks.md, "Memory (issue 36)"). One arena held the same work
// in 23–26 MB less (two arenas: 19–21 MB less), at no measurable CPU:
// glibc's per-thread caches serve most small allocations without the
// arena's lock.
//
// The cap is set by a C constructor, before the Go runtime starts a
// thread, as MALLOC_ARENA_MAX=1 would be; an operator's own
// MALLOC_ARENA_MAX or GLIBC_TUNABLES arena_max wins (doc/config.md).

/*
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <pthread.h>
#include <malloc.h>

#define KAIROS_ARENA_MAX 1

static void kairos_cap_arenas(void) __attribute__((constructor));

static void kairos_cap_arenas(void) {
#if defined(__GLIBC__) && defined(M_ARENA_MAX)
	const char *t = getenv("GLIBC_TUNABLES");
	if (getenv("MALLOC_ARENA_MAX") != NULL || (t != NULL && strstr(t, "arena_max") != NULL)) {
		return;
	}
	mallopt(M_ARENA_MAX, KAIROS_ARENA_MAX);
#endif
}

// kairos_arenas counts glibc's malloc arenas (malloc_info's heaps); -1
// where that cannot be known.
static int kairos_arenas(void) {
#if defined(__GLIBC__)
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	if (f == NULL) {
		return -1;
	}
	malloc_info(0, f);
	fclose(f);
	int c = 0;
	for (char *p = buf; (p = strstr(p, "<heap nr=")) != NULL; p++) {
		c++;
	}
	free(buf);
	return c;
#else
	return -1;
#endif
}

static pthread_barrier_t kairos_barrier;

static void *kairos_churn_one(void *arg) {
	(void)arg;
	pthread_barrier_wait(&kairos_barrier);
	for (int i = 0; i < 2000; i++) {
		void *p = malloc(256 + (i % 7) * 512);
		if (p != NULL) {
			memset(p, 1, 64);
		}
		free(p);
	}
	return NULL;
}

// kairos_churn has n threads malloc at once, so that glibc meets
// contention and would make them arenas of their own.
static void kairos_churn(int n) {
	pthread_t t[64];
	if (n > 64) {
		n = 64;
	}
	pthread_barrier_init(&kairos_barrier, NULL, (unsigned)n);
	for (int i = 0; i < n; i++) {
		pthread_create(&t[i], NULL, kairos_churn_one, NULL);
	}
	for (int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
	}
	pthread_barrier_destroy(&kairos_barrier);
}
*/
import "C"

// mallocArenas returns how many malloc arenas glibc has made (-1 when not
// glibc), after n threads of C code allocated at once.
func mallocArenas(n int) int {
	C.kairos_churn(C.int(n))
	return int(C.kairos_arenas())
}
