/* Status codes and the last-error message every layer returns up to cmd/: LB_OK (0) or a
 * negative LbStatus, the message (with file and line) recorded by whoever first sees the failure
 * through LB_FAIL. Out of memory is a value (LB_ERR_NOMEM): the batch search depends on it. */
#ifndef LB_STATUS_H
#define LB_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum LbStatus {
    LB_OK = 0,
    LB_ERR_NOMEM = -1,       /* an allocation did not fit: recoverable */
    LB_ERR_INVALID = -2,     /* bad argument or configuration */
    LB_ERR_DEVICE = -3,      /* CUDA / cuBLAS failure: not recoverable */
    LB_ERR_NODEVICE = -4,    /* no CUDA device, or linbench built without CUDA */
    LB_ERR_IO = -5,          /* a file could not be read or written */
    LB_ERR_UNSUPPORTED = -6, /* the backend cannot do what was asked */
    LB_ERR_INTERRUPTED = -7, /* the user pressed Ctrl-C */
    LB_ERR_FORMAT = -8       /* a file linbench reads back is not what it wrote */
} LbStatus;

/* The longest error message kept whole: room for a path of the longest --out linbench accepts
 * (3968 bytes) with a library's message around it. */
#define LB_ERROR_MAX 8192

/* Short name of a status ("NOMEM", "DEVICE", ...). */
const char *lb_status_name(int status);

/* Record the message for the failure being returned (printf-style). The newest message wins:
 * callers above the failure pass its code on with LB_TRY and add no message of their own, and a
 * recovered failure (an out-of-memory probe during the batch search) leaves nothing that a later
 * failure would not replace. */
void lb_error_set(const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* The recorded message without file:line (for users), and with it (for --verbose / tests). */
const char *lb_error_message(void);
const char *lb_error_where(void);
void lb_error_clear(void);

/* Record a message and evaluate to `code`: `return LB_FAIL(LB_ERR_IO, "cannot open %s", p);` */
#define LB_FAIL(code, ...) (lb_error_set(__FILE__, __LINE__, __VA_ARGS__), (code))

/* Propagate a non-OK status. */
#define LB_TRY(expr)                   \
    do {                               \
        int lb_try_rc_ = (expr);       \
        if (lb_try_rc_ != LB_OK)       \
            return lb_try_rc_;         \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif
