/* One arena per measured model: one backend allocation sized by the plan, carved by a bump
 * pointer with stack-style marks so each phase of a layer reuses the same bytes. Its high-water
 * mark must equal the plan (tests/model/test_model.c). Addresses only: it never touches memory. */
#ifndef LB_ARENA_H
#define LB_ARENA_H

#include <stddef.h>

#include "attn/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct LbArena {
    LbBackend *be;
    char *base;        /* backend memory; NULL in a counting arena */
    size_t capacity;   /* bytes; SIZE_MAX in a counting arena */
    size_t used;       /* bytes handed out below the current top */
    size_t high_water; /* most ever used */
    size_t alignment;
    int overflowed;    /* an allocation asked for more than the capacity: a plan bug */
} LbArena;

/* Take `capacity` bytes from the backend in one allocation. LB_ERR_NOMEM when they do not fit. */
int lb_arena_open(LbArena *a, LbBackend *be, size_t capacity);
/* An arena that hands out no memory, only counts (NULL pointers): the plan's dry run
 * (attn/plan.c). */
void lb_arena_counting(LbArena *a, size_t alignment);
void lb_arena_close(LbArena *a);

/* Round `bytes` up to the arena alignment: every allocation, and so the plan, uses this. */
size_t lb_align_up(size_t bytes, size_t alignment);

/* `bytes` more, aligned. LB_ERR_NOMEM (with a message naming `what`) past the capacity. */
int lb_arena_alloc(LbArena *a, size_t bytes, const char *what, void **ptr);

/* Stack marks: lb_arena_reset(a, m) frees everything allocated since m = lb_arena_mark(a). */
size_t lb_arena_mark(const LbArena *a);
void lb_arena_reset(LbArena *a, size_t mark);

#ifdef __cplusplus
}
#endif

#endif
