#include "testutil.h"

#include <string.h>

long tu_checks, tu_failures;
static uint64_t tu_state = 0x243f6a8885a308d3ULL;

void tu_seed(uint64_t s) { tu_state = s; }

uint64_t tu_rand64(void)
{
    uint64_t z = (tu_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void tu_rand_bytes(void *p, size_t n)
{
    uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)tu_rand64();
}

int tu_finish(const char *name)
{
    printf("%s: %ld checks, %ld failed\n", name, tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}

char *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        return NULL;
    }
    buf[n] = 0;
    fclose(f);
    if (len)
        *len = (size_t)n;
    return buf;
}

const char *tu_src_path(const char *rel)
{
    static char buf[4096];
    const char *root = getenv("CUZK_SOURCE_DIR");
    snprintf(buf, sizeof buf, "%s/%s", root ? root : ".", rel);
    return buf;
}
