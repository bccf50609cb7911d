/* Fibers for the emulated GPU's threads: see fiber.h. Stacks are mmap'ed with a guard page below
 * them, so a kernel whose frame overruns its stack faults at once instead of writing over the
 * next thread's. */
#include "gpu/emu/fiber.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vector>

#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#if defined(LB_EMU_HAVE_FCONTEXT)
#include <boost/context/detail/fcontext.hpp>
#define LB_EMU_FCONTEXT 1
#endif

#if defined(__SANITIZE_ADDRESS__)
#define LB_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LB_EMU_ASAN 1
#endif
#endif
#ifdef LB_EMU_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace lb_emu {
namespace {

/* A kernel thread's frames are small (a few packs in registers); AddressSanitizer's redzones
 * and frames need more. Only the pages a thread touches are ever committed. */
#ifdef LB_EMU_ASAN
constexpr size_t kStackBytes = (size_t)512 << 10;
#else
constexpr size_t kStackBytes = (size_t)128 << 10;
#endif

struct Fiber {
    char *map = nullptr; /* guard page, then the stack */
    char *stack = nullptr;
    size_t stack_bytes = 0;
    FiberBody body = nullptr;
    void *arg = nullptr;
    bool finished = false;
#ifdef LB_EMU_FCONTEXT
    boost::context::detail::fcontext_t fctx = nullptr;
#endif
    ucontext_t uctx;
#ifdef LB_EMU_ASAN
    void *fake_stack = nullptr;
#endif
};

std::vector<Fiber *> g_fibers;
Fiber *g_current = nullptr;
#ifdef LB_EMU_FCONTEXT
boost::context::detail::fcontext_t g_sched_fctx = nullptr;
#endif
ucontext_t g_sched_uctx;
Fiber *g_starting = nullptr;

/* fcontext where built, unless LB_EMU_FIBERS=ucontext asks for the fallback (its test runs that
 * way). AddressSanitizer intercepts swapcontext and re-maps the shadow of the whole stack on
 * every switch, which makes ucontext unusable there. */
bool use_ucontext()
{
#ifdef LB_EMU_FCONTEXT
    static int u = -1;
    if (u < 0) {
        const char *e = getenv("LB_EMU_FIBERS");
        u = e && strcmp(e, "ucontext") == 0;
    }
    return u == 1;
#else
    return true;
#endif
}
#ifdef LB_EMU_ASAN
void *g_sched_fake = nullptr;
const void *g_sched_bottom = nullptr;
size_t g_sched_size = 0;
#endif

/* Sanitizer bookkeeping around each switch (no-ops without AddressSanitizer). */
inline void to_fiber_begin(Fiber *f)
{
#ifdef LB_EMU_ASAN
    __sanitizer_start_switch_fiber(&g_sched_fake, f->stack, f->stack_bytes);
#else
    (void)f;
#endif
}

inline void to_fiber_end()
{
#ifdef LB_EMU_ASAN
    __sanitizer_finish_switch_fiber(g_sched_fake, nullptr, nullptr);
#endif
}

inline void in_fiber_arrived(Fiber *f)
{
#ifdef LB_EMU_ASAN
    __sanitizer_finish_switch_fiber(f->fake_stack, &g_sched_bottom, &g_sched_size);
#else
    (void)f;
#endif
}

inline void in_fiber_leaving(Fiber *f, bool for_good)
{
#ifdef LB_EMU_ASAN
    __sanitizer_start_switch_fiber(for_good ? nullptr : &f->fake_stack, g_sched_bottom, g_sched_size);
#else
    (void)f;
    (void)for_good;
#endif
}

void run_body_and_finish(Fiber *f)
{
    f->body(f->arg);
    f->finished = true;
    in_fiber_leaving(f, true);
}

#ifdef LB_EMU_FCONTEXT
void fiber_entry_fcontext(boost::context::detail::transfer_t t)
{
    g_sched_fctx = t.fctx;
    Fiber *f = static_cast<Fiber *>(t.data);
    in_fiber_arrived(f);
    run_body_and_finish(f);
    boost::context::detail::jump_fcontext(g_sched_fctx, nullptr);
    /* never resumed: fiber_start makes a new context */
}
#endif

void fiber_entry_ucontext()
{
    Fiber *f = g_starting;
    in_fiber_arrived(f);
    run_body_and_finish(f);
    /* uc_link returns to the scheduler */
}

} // namespace

bool fibers_reserve(int count)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    while ((int)g_fibers.size() < count) {
        Fiber *f = new Fiber();
        void *m = mmap(nullptr, kStackBytes + page, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) {
            delete f;
            return false;
        }
        (void)mprotect(m, page, PROT_NONE);
        f->map = static_cast<char *>(m);
        f->stack = f->map + page;
        f->stack_bytes = kStackBytes;
        g_fibers.push_back(f);
    }
    return true;
}

void fiber_start(int i, FiberBody body, void *arg)
{
    Fiber *f = g_fibers[(size_t)i];
    f->body = body;
    f->arg = arg;
    f->finished = false;
#ifdef LB_EMU_ASAN
    f->fake_stack = nullptr;
#endif
#ifdef LB_EMU_FCONTEXT
    if (!use_ucontext()) {
        f->fctx = boost::context::detail::make_fcontext(f->stack + f->stack_bytes, f->stack_bytes,
                                                        fiber_entry_fcontext);
        return;
    }
#endif
    getcontext(&f->uctx);
    f->uctx.uc_stack.ss_sp = f->stack;
    f->uctx.uc_stack.ss_size = f->stack_bytes;
    f->uctx.uc_link = &g_sched_uctx;
    makecontext(&f->uctx, fiber_entry_ucontext, 0);
}

bool fiber_resume(int i)
{
    Fiber *f = g_fibers[(size_t)i];
    g_current = f;
    to_fiber_begin(f);
#ifdef LB_EMU_FCONTEXT
    if (!use_ucontext()) {
        boost::context::detail::transfer_t t = boost::context::detail::jump_fcontext(f->fctx, f);
        f->fctx = t.fctx;
    } else
#endif
    {
        g_starting = f;
        swapcontext(&g_sched_uctx, &f->uctx);
    }
    to_fiber_end();
    g_current = nullptr;
    return f->finished;
}

void fiber_yield()
{
    Fiber *f = g_current;
    in_fiber_leaving(f, false);
#ifdef LB_EMU_FCONTEXT
    if (!use_ucontext()) {
        boost::context::detail::transfer_t t = boost::context::detail::jump_fcontext(g_sched_fctx, nullptr);
        g_sched_fctx = t.fctx;
    } else
#endif
        swapcontext(&f->uctx, &g_sched_uctx);
    in_fiber_arrived(f);
}

const char *fiber_impl()
{
    return use_ucontext() ? "ucontext" : "fcontext";
}

} // namespace lb_emu
