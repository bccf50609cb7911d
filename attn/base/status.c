/* The last-error message behind LB_FAIL: one per thread; the newest failure's message. */
#include "attn/base/status.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char lb_err_msg[LB_ERROR_MAX];
static _Thread_local char lb_err_where[LB_ERROR_MAX + 128];
static _Thread_local int lb_err_set;

const char *lb_status_name(int status)
{
    static const char *const names[] = {"OK", "NOMEM", "INVALID", "DEVICE", "NODEVICE", "IO", "UNSUPPORTED",
                                        "INTERRUPTED", "FORMAT"}; /* by -status */
    return status <= 0 && -status < (int)(sizeof names / sizeof names[0]) ? names[-status] : "UNKNOWN";
}

void lb_error_set(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(lb_err_msg, sizeof lb_err_msg, fmt, ap);
    va_end(ap);
    snprintf(lb_err_where, sizeof lb_err_where, "%s:%d: %s", file, line, lb_err_msg);
    lb_err_set = 1;
}

const char *lb_error_message(void) { return lb_err_set ? lb_err_msg : "no error recorded"; }
const char *lb_error_where(void) { return lb_err_set ? lb_err_where : "no error recorded"; }

void lb_error_clear(void)
{
    lb_err_set = 0;
    lb_err_msg[0] = '\0';
    lb_err_where[0] = '\0';
}
