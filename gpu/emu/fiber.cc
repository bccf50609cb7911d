/* Fibers for the emulated GPU's threads: see fiber.h. Stacks are mmap'ed with a guard page below
 * them, so a kernel whose frame overruns its stack faults at once instead of writing over the
 * next thread's. */
#include "gpu/emu/fiber.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vector>

#if defined(LB_EMU_HAVE_FCONTEXT) && !defined(LB_EMU_FORCE_UCONTEXT)
#include <boost/context/detail/fcontext.hpp>
#define LB_EMU_FCONTEXT 1
#else
#include <ucontext.h>
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
    boost::context::detail::fcontext_t ctx = nullptr;
#else
    ucontext_t ctx;
#endif
#ifdef LB_EMU_ASAN
    void *fake_stack = nullptr;
#endif
};

std::vector<Fiber *> g_fibers;
Fiber *g_current = nullptr;
#ifdef LB_EMU_FCONTEXT
boost::context::detail::fcontext_t g_sched_ctx = nullptr;
#else
ucontext_t g_sched_ctx;
Fiber *g_starting = nullptr;
#endif
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
void fiber_entry(boost::context::detail::transfer_t t)
{
    g_sched_ctx = t.fctx;
    Fiber *f = static_cast<Fiber *>(t.data);
    in_fiber_arrived(f);
    run_body_and_finish(f);
    boost::context::detail::jump_fcontext(g_sched_ctx, nullptr);
    /* never resumed: fiber_start makes a new context */
}
#else
void fiber_entry()
{
    Fiber *f = g_starting;
    in_fiber_arrived(f);
    run_body_and_finish(f);
    /* uc_link returns to the scheduler */
}
#endif

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
    f->ctx = boost::context::detail::make_fcontext(f->stack + f->stack_bytes, f->stack_bytes, fiber_entry);
#else
    getcontext(&f->ctx);
    f->ctx.uc_stack.ss_sp = f->stack;
    f->ctx.uc_stack.ss_size = f->stack_bytes;
    f->ctx.uc_link = &g_sched_ctx;
    makecontext(&f->ctx, fiber_entry, 0);
    f->finished = false;
    g_starting = nullptr;
#endif
}

bool fiber_resume(int i)
{
    Fiber *f = g_fibers[(size_t)i];
    g_current = f;
    to_fiber_begin(f);
#ifdef LB_EMU_FCONTEXT
    boost::context::detail::transfer_t t = boost::context::detail::jump_fcontext(f->ctx, f);
    f->ctx = t.fctx;
#else
    g_starting = f;
    swapcontext(&g_sched_ctx, &f->ctx);
#endif
    to_fiber_end();
    g_current = nullptr;
    return f->finished;
}

void fiber_yield()
{
    Fiber *f = g_current;
    in_fiber_leaving(f, false);
#ifdef LB_EMU_FCONTEXT
    boost::context::detail::transfer_t t = boost::context::detail::jump_fcontext(g_sched_ctx, nullptr);
    g_sched_ctx = t.fctx;
#else
    swapcontext(&f->ctx, &g_sched_ctx);
#endif
    in_fiber_arrived(f);
}

const char *fiber_impl()
{
#ifdef LB_EMU_FCONTEXT
    return "fcontext";
#else
    return "ucontext";
#endif
}

} // namespace lb_emu
