/* Shared by the benchmark programs: every benchmark prints the machine it ran on. */
#ifndef CUZK_BENCH_COMMON_H
#define CUZK_BENCH_COMMON_H

#include <stdio.h>
#include <string.h>

/* The CPU's "model name" from /proc/cpuinfo, or "unknown". */
static void cpu_model(char *out, size_t cap)
{
    snprintf(out, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ' || *c == '\t')
                    c++;
                c[strcspn(c, "\n")] = 0;
                snprintf(out, cap, "%s", c);
            }
            break;
        }
    }
    fclose(f);
}

#endif
