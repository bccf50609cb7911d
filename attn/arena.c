/* The bump arena behind every measured model: see arena.h. */
#include "attn/arena.h"

#include <stdint.h>
#include <string.h>

#include "attn/base/status.h"

size_t lb_align_up(size_t bytes, size_t alignment) { return (bytes + alignment - 1) & ~(alignment - 1); }

int lb_arena_open(LbArena *a, LbBackend *be, size_t capacity)
{
    memset(a, 0, sizeof *a);
    a->be = be;
    a->alignment = be->alignment;
    a->capacity = lb_align_up(capacity, a->alignment);
    void *p = NULL;
    int rc = be->ops->mem_alloc(be, a->capacity, &p);
    if (rc != LB_OK)
        return rc;
    a->base = (char *)p;
    return LB_OK;
}

void lb_arena_counting(LbArena *a, size_t alignment)
{
    memset(a, 0, sizeof *a);
    a->capacity = SIZE_MAX;
    a->alignment = alignment;
}

void lb_arena_close(LbArena *a)
{
    if (a->be && a->base)
        a->be->ops->mem_free(a->be, a->base);
    a->base = NULL;
}

int lb_arena_alloc(LbArena *a, size_t bytes, const char *what, void **ptr)
{
    size_t size = lb_align_up(bytes, a->alignment);
    if (size < bytes || size > a->capacity - a->used) {
        a->overflowed = 1;
        return LB_FAIL(LB_ERR_NOMEM, "arena of %zu bytes has no room for %s (%zu bytes, %zu in use)",
                       a->capacity, what, bytes, a->used);
    }
    *ptr = a->base ? a->base + a->used : NULL;
    a->used += size;
    if (a->used > a->high_water)
        a->high_water = a->used;
    return LB_OK;
}

size_t lb_arena_mark(const LbArena *a) { return a->used; }

void lb_arena_reset(LbArena *a, size_t mark)
{
    if (mark <= a->used)
        a->used = mark;
}
