/* Command-line parsing shared by the cuzk subcommands (main.c, cmd_setup.c). */
#ifndef CUZK_CMD_CLI_H
#define CUZK_CMD_CLI_H

#define CLI_EXIT_INPUT 2

typedef struct {
    const char *name; /* long name without dashes */
    char short_name;  /* 0: none */
    int takes_value;
    const char *value;
    int seen;
} cli_opt;

/* "cuzk CMD: MSG / Try 'cuzk CMD --help'." on stderr; returns the input-error exit code. */
int cli_usage(const char *cmd, const char *msg);
/* Options (--name, --name=value, --name value, -x, -x value) and positional arguments; "--"
 * ends the options. Returns 0 or the exit code of a usage error (already printed). */
int cli_parse(const char *cmd, int argc, char **argv, cli_opt *o, int no, const char **pos,
              int maxpos, int *npos);
/* --threads N (1..4096) when given: *out = N and the library's default thread count set. */
int cli_threads(const char *cmd, const cli_opt *o, unsigned *out);

#endif
