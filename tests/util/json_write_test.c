/* cuzk_sb_write_file: a regular file or a missing path is replaced atomically (temp file +
 * rename); a symlink is written through to its target, which stays the link's; a device is
 * written in place and never replaced, and a failed write (ENOSPC from a "full" device) is an
 * error. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cuzk/json.h"
#include "testutil.h"

static char dir[] = "/tmp/cuzk-write-test-XXXXXX";

static void put(const char *name, const char *text, cuzk_err want)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    cuzk_strbuf sb;
    cuzk_sb_init(&sb);
    cuzk_sb_puts(&sb, text);
    cuzk_errbuf eb = {{0}};
    cuzk_err e = cuzk_sb_write_file(&sb, p, &eb);
    cuzk_sb_free(&sb);
    CHECK_MSG(e == want, "%s: got %d (%s), expected %d", name, (int)e, eb.msg, (int)want);
    if (want)
        CHECK_MSG(strstr(eb.msg, name) != NULL, "message names the file: %s", eb.msg);
}

static int is(const char *name, mode_t type)
{
    char p[256];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return lstat(p, &st) == 0 && (st.st_mode & S_IFMT) == type;
}

static int holds(const char *name, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    size_t n = 0;
    char *s = tu_read_file(p, &n);
    int ok = s && n == strlen(text) && memcmp(s, text, n) == 0;
    free(s);
    return ok;
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char p[256], q[256];

    put("new.json", "{\"a\":1}\n", CUZK_OK);
    CHECK(is("new.json", S_IFREG) && holds("new.json", "{\"a\":1}\n"));
    put("new.json", "{}\n", CUZK_OK); /* replaced */
    CHECK(holds("new.json", "{}\n"));

    /* A symlink stays a link; its target receives the text. */
    snprintf(p, sizeof p, "%s/target.json", dir);
    snprintf(q, sizeof q, "%s/link.json", dir);
    CHECK(symlink(p, q) == 0);
    put("link.json", "[1]\n", CUZK_OK);
    CHECK_MSG(is("link.json", S_IFLNK), "the symlink was replaced by a file");
    CHECK(is("target.json", S_IFREG) && holds("target.json", "[1]\n"));
    put("link.json", "[2]\n", CUZK_OK); /* an existing target is rewritten */
    CHECK(is("link.json", S_IFLNK) && holds("target.json", "[2]\n"));

    /* Devices: /dev/null accepts the text in place; "full" (1,7) fails with ENOSPC. mknod needs
     * root; without it these cases are skipped (the symlink case covers the rename). */
    snprintf(p, sizeof p, "%s/null", dir);
    snprintf(q, sizeof q, "%s/full", dir);
    int have_dev = mknod(p, S_IFCHR | 0666, makedev(1, 3)) == 0 &&
                   mknod(q, S_IFCHR | 0666, makedev(1, 7)) == 0;
    if (have_dev) {
        int fd = open(q, O_WRONLY);
        int usable = fd >= 0; /* a nodev mount refuses to open device nodes */
        if (fd >= 0)
            close(fd);
        put("null", "x\n", usable ? CUZK_OK : CUZK_IO);
        CHECK_MSG(is("null", S_IFCHR), "the null device was replaced");
        put("full", "x\n", CUZK_IO);
        CHECK_MSG(is("full", S_IFCHR), "the full device was replaced");
    } else {
        fprintf(stderr, "json_write: mknod refused (%s): device cases skipped\n",
                strerror(errno));
    }
    /* A directory is refused, and stays. */
    snprintf(p, sizeof p, "%s/adir", dir);
    CHECK(mkdir(p, 0700) == 0);
    put("adir", "x\n", CUZK_IO);
    CHECK(is("adir", S_IFDIR));
    /* No temp file is left behind by any of the cases above. */
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)))
        CHECK_MSG(!strstr(de->d_name, ".tmp."), "left behind: %s", de->d_name);
    if (d)
        closedir(d);

    const char *names[] = {"new.json", "link.json", "target.json", "null", "full"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    snprintf(p, sizeof p, "%s/adir", dir);
    rmdir(p);
    rmdir(dir);
    return tu_finish("json_write");
}
