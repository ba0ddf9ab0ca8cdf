#include "cuzk/err.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const cuzk__err_msgs[] = {
#define CUZK__ERR_MSG(name, msg) msg,
    CUZK_ERRNO_MAP(CUZK__ERR_MSG)
#undef CUZK__ERR_MSG
};

static const char *const cuzk__err_names[] = {
#define CUZK__ERR_NAME(name, msg) #name,
    CUZK_ERRNO_MAP(CUZK__ERR_NAME)
#undef CUZK__ERR_NAME
};

const char *cuzk_strerror(cuzk_err e)
{
    if ((unsigned)e >= CUZK__ERR_COUNT)
        return "unknown error";
    return cuzk__err_msgs[e];
}

const char *cuzk_errname(cuzk_err e)
{
    if ((unsigned)e >= CUZK__ERR_COUNT)
        return "UNKNOWN";
    return cuzk__err_names[e];
}

cuzk_err cuzk_errf(cuzk_errbuf *eb, cuzk_err e, const char *fmt, ...)
{
    if (eb) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(eb->msg, sizeof eb->msg, fmt, ap);
        va_end(ap);
    }
    return e;
}
