/* cuzk-witness-runner: runs one circom witness program for libcuzk, which starts it (see
 * src/witness/runner.h); not a command for people. */
#include <stdio.h>
#include <stdlib.h>

#include "witness/runner.h"

int main(int argc, char **argv)
{
    char *end = NULL;
    long parent = argc == 2 ? strtol(argv[1], &end, 10) : 0;
    if (parent <= 0 || *end) {
        fprintf(stderr, "%s: libcuzk starts this program to run a circom witness program; "
                        "it is not run by hand (use `cuzk witness`)\n",
                CUZK__RUNNER_NAME);
        return 2;
    }
    return cuzk__witness_runner_main((pid_t)parent);
}
