/* Command-line parsing shared by the cuzk subcommands (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/parallel.h"

int cli_usage(const char *cmd, const char *msg)
{
    fprintf(stderr, "cuzk %s: %s\nTry 'cuzk %s --help'.\n", cmd, msg, cmd);
    return CLI_EXIT_INPUT;
}

int cli_parse(const char *cmd, int argc, char **argv, cli_opt *o, int no, const char **pos,
              int maxpos, int *npos)
{
    *npos = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int k = no;
        const char *val = NULL;
        char m[300];
        if (strcmp(a, "--") == 0) {
            for (i++; i < argc; i++) {
                if (*npos >= maxpos)
                    return cli_usage(cmd, "too many arguments");
                pos[(*npos)++] = argv[i];
            }
            break;
        }
        if (a[0] == '-' && a[1] == '-') {
            const char *eq = strchr(a, '=');
            size_t nl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
            for (k = 0; k < no; k++)
                if (strlen(o[k].name) == nl && strncmp(o[k].name, a + 2, nl) == 0)
                    break;
            if (eq)
                val = eq + 1;
        } else if (a[0] == '-' && a[1] && !a[2]) {
            for (k = 0; k < no; k++)
                if (o[k].short_name == a[1])
                    break;
        } else {
            if (*npos >= maxpos)
                return cli_usage(cmd, "too many arguments");
            pos[(*npos)++] = a;
            continue;
        }
        if (k == no) {
            snprintf(m, sizeof m, "unknown option '%s'", a);
            return cli_usage(cmd, m);
        }
        o[k].seen = 1;
        if (o[k].takes_value) {
            if (!val) {
                if (i + 1 >= argc) {
                    snprintf(m, sizeof m, "option '%s' needs a value", a);
                    return cli_usage(cmd, m);
                }
                val = argv[++i];
            }
            o[k].value = val;
        } else if (val) {
            snprintf(m, sizeof m, "option '--%s' takes no value", o[k].name);
            return cli_usage(cmd, m);
        }
    }
    return 0;
}

int cli_threads(const char *cmd, const cli_opt *o, unsigned *out)
{
    *out = 0;
    if (!o->seen)
        return 0;
    char *end;
    errno = 0;
    long v = strtol(o->value, &end, 10);
    if (errno || *end || v < 1 || v > 4096)
        return cli_usage(cmd, "--threads must be an integer from 1 to 4096");
    *out = (unsigned)v;
    cuzk_set_num_threads(*out);
    return 0;
}
