/* Test-only leak injection for tests/bench/bench_test.sh: an LD_PRELOAD shim that wraps
 * libgrpc's grpc_call_unref (called once per finished RPC in src/rpc/server.c, so once per
 * Prove) and leaks CUZK_TEST_LEAK_BYTES bytes each time, touched so they count in RSS. It
 * injects a leak into the real cuzk-daemon binary without changing the daemon's source. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef struct grpc_call grpc_call;

/* Keeps the compiler from deleting the unused allocation. */
void *volatile cuzk_test_leak_sink;

void grpc_call_unref(grpc_call *call)
{
    static void (*real)(grpc_call *);
    static long bytes = -1;
    if (!real)
        real = (void (*)(grpc_call *))dlsym(RTLD_NEXT, "grpc_call_unref");
    if (bytes < 0) {
        const char *s = getenv("CUZK_TEST_LEAK_BYTES");
        bytes = s ? atol(s) : 0;
    }
    if (bytes > 0) {
        char *p = malloc((size_t)bytes);
        if (p)
            memset(p, 0x5a, (size_t)bytes);
        cuzk_test_leak_sink = p;
    }
    real(call);
}
