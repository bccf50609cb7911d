/* The emulated GPU's scheduler: runs a kernel launch block by block, each block's threads as
 * fibers (gpu/emu/fiber.h) on the launching host thread, and checks every meeting point of the
 * threads as the hardware and PTX define it:
 *   - __syncthreads releases when every live thread of the block waits at it, at one site;
 *     threads waiting at different sites, or some at a barrier while others wait for a warp
 *     operation they will never reach, are a deadlock: reported by site, never a hang;
 *   - a warp operation (__shfl_*_sync, votes, __syncwarp) completes when every lane named in its
 *     mask has reached the same operation, at the same file:line, with the same mask; a named lane
 *     that exited, does not exist, waits elsewhere, or a shuffle that reads a lane outside the
 *     mask, is a fault naming the lanes and sites;
 *   - lanes run in ascending order in one block and descending in the next (LB_EMU_LANE_ORDER=up
 *     or down forces one), so that a missing barrier between a write and a read of shared memory
 *     is caught whichever side of it the writer is on; shared memory holds 0xFF bytes (NaN) at
 *     the start of every block.
 * A fault stops the launch, is printed once on stderr and becomes the sticky error
 * (cudaErrorLaunchFailure) of the runtime, as a kernel fault is on a GPU. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "gpu/emu/emu.h"
#include "gpu/emu/emu_device.h"
#include "gpu/emu/emu_internal.h"
#include "gpu/emu/emu_tensor_core.h"
#include "gpu/emu/fiber.h"

namespace lb_emu {

LaneRegs *cur_lane = nullptr;
uint3 cur_block_idx;
dim3 cur_block_dim, cur_grid_dim;

namespace {

enum LaneState { LANE_RUNNABLE, LANE_AT_BARRIER, LANE_AT_WARP, LANE_EXITED };

/* A cp.async copy issued and not yet completed by a wait: its group is 0 until committed. */
struct AsyncCopy {
    void *dst;
    const void *src;
    size_t bytes, src_bytes;
    int group;
    const char *file;
    int line;
};

struct Lane {
    LaneRegs regs; /* first: cur_lane points here */
    LaneState state;
    const char *file;
    int line;
    WarpOpKind kind;
    unsigned mask;
    uint64_t bits;
    int arg, width;
    uint64_t result;
    const char *name;                      /* WARP_COLLECTIVE: the instruction */
    void (*collective)(void *const *lanes); /* WARP_COLLECTIVE: computes every lane's result */
    std::vector<AsyncCopy> copies;         /* cp.async in flight */
    int groups;                            /* cp.async groups committed */
};

std::vector<Lane> g_lanes;

/* The shared arrays of the running launch, by declaration site; each its own heap block. */
struct SharedSlot {
    const char *file;
    int line;
    size_t bytes;
    void *p;
};
std::vector<SharedSlot> g_shared;
size_t g_shared_total = 0;
void *g_dynamic = nullptr; /* the launch's dynamic shared memory, g_dynamic_bytes of it */
size_t g_dynamic_bytes = 0;
constexpr size_t kSharedLimit = (size_t)48 << 10; /* static shared memory per block */
void (*g_body)(void *) = nullptr;
void *g_ctx = nullptr;
std::string g_fault; /* the fault of the block being run, "" when none */
unsigned long long g_launches = 0;

const char *op_name(WarpOpKind k)
{
    switch (k) {
    case WARP_SHFL_IDX: return "__shfl_sync";
    case WARP_SHFL_UP: return "__shfl_up_sync";
    case WARP_SHFL_DOWN: return "__shfl_down_sync";
    case WARP_SHFL_XOR: return "__shfl_xor_sync";
    case WARP_BALLOT: return "__ballot_sync";
    case WARP_ANY: return "__any_sync";
    case WARP_ALL: return "__all_sync";
    default: return "__syncwarp";
    }
}

const char *op_name(const Lane &l) { return l.kind == WARP_COLLECTIVE ? l.name : op_name(l.kind); }

std::string where(const Lane &l)
{
    char buf[512];
    if (l.state == LANE_AT_BARRIER)
        snprintf(buf, sizeof buf, "__syncthreads at %s:%d", l.file, l.line);
    else if (l.state == LANE_AT_WARP)
        snprintf(buf, sizeof buf, "%s (mask 0x%08x) at %s:%d", op_name(l), l.mask, l.file, l.line);
    else if (l.state == LANE_EXITED)
        snprintf(buf, sizeof buf, "exited");
    else
        snprintf(buf, sizeof buf, "running");
    return buf;
}

void fault(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fault(const char *fmt, ...)
{
    if (!g_fault.empty())
        return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    g_fault = buf;
}

void lane_main(void *arg)
{
    Lane *l = static_cast<Lane *>(arg);
    cur_lane = &l->regs;
    g_body(g_ctx);
}

/* Lanes grouped by where they wait, "lanes 0-31, 64: __syncthreads at f:12; lanes 32-63: ..." */
std::string describe_waits(int n)
{
    std::string out;
    std::vector<bool> done((size_t)n, false);
    for (int i = 0; i < n; i++) {
        if (done[(size_t)i] || g_lanes[(size_t)i].state == LANE_EXITED)
            continue;
        const std::string w = where(g_lanes[(size_t)i]);
        std::string lanes;
        int run_start = -1, prev = -2, shown = 0;
        for (int j = i; j <= n; j++) {
            const bool same = j < n && !done[(size_t)j] && g_lanes[(size_t)j].state != LANE_EXITED &&
                              where(g_lanes[(size_t)j]) == w;
            if (same) {
                done[(size_t)j] = true;
                if (run_start < 0)
                    run_start = j;
                else if (j != prev + 1) {
                    lanes += (shown++ ? "," : "") + std::to_string(run_start) +
                             (prev > run_start ? "-" + std::to_string(prev) : "");
                    run_start = j;
                }
                prev = j;
            }
        }
        if (run_start >= 0)
            lanes += (shown ? "," : "") + std::to_string(run_start) +
                     (prev > run_start ? "-" + std::to_string(prev) : "");
        if (!out.empty())
            out += "; ";
        out += "threads " + lanes + ": " + w;
    }
    return out;
}

/* Source lane of lane `j` for a shuffle, or j itself where PTX returns the lane's own value. */
int shuffle_source(const Lane &l, int j)
{
    const int w = l.width;
    const int seg = j & ~(w - 1);
    switch (l.kind) {
    case WARP_SHFL_IDX: return seg + (l.arg & (w - 1));
    case WARP_SHFL_UP: return j - l.arg >= seg ? j - l.arg : j;
    case WARP_SHFL_DOWN: return j + l.arg < seg + w ? j + l.arg : j;
    case WARP_SHFL_XOR: {
        const int s = j ^ l.arg;
        return s < seg + w && s < 32 ? s : j;
    }
    default: return j;
    }
}

/* Complete every warp operation whose lanes have all arrived. Returns how many completed; on an
 * inconsistency sets the fault. */
int resolve_warps(int n)
{
    int completed = 0;
    for (int w0 = 0; w0 < n; w0 += 32) {
        for (int i = w0; i < n && i < w0 + 32; i++) {
            Lane &l = g_lanes[(size_t)i];
            if (l.state != LANE_AT_WARP)
                continue;
            const int me = i - w0;
            if (!(l.mask >> me & 1u)) {
                fault("thread %d calls %s at %s:%d with mask 0x%08x, which leaves out its own lane %d",
                      i, op_name(l), l.file, l.line, l.mask, me);
                return completed;
            }
            if (l.kind <= WARP_SHFL_XOR && (l.width < 1 || l.width > 32 || (l.width & (l.width - 1)))) {
                fault("thread %d calls %s at %s:%d with width %d (a power of two up to 32)", i,
                      op_name(l), l.file, l.line, l.width);
                return completed;
            }
            bool ready = true;
            for (int j = 0; j < 32; j++) {
                if (!(l.mask >> j & 1u))
                    continue;
                const int t = w0 + j;
                if (t >= n) {
                    fault("thread %d calls %s at %s:%d with mask 0x%08x naming lane %d, which does not exist in a block of %d threads",
                          i, op_name(l), l.file, l.line, l.mask, j, n);
                    return completed;
                }
                const Lane &o = g_lanes[(size_t)t];
                if (o.state == LANE_AT_WARP && o.kind == l.kind && o.line == l.line &&
                    strcmp(o.file, l.file) == 0 && o.mask == l.mask &&
                    (l.kind != WARP_COLLECTIVE || o.collective == l.collective))
                    continue;
                if (o.state == LANE_RUNNABLE) {
                    ready = false;
                    continue;
                }
                fault("thread %d waits at %s but thread %d of its mask is %s",
                      i, where(l).c_str(), t, o.state == LANE_EXITED ? "exited" : ("at " + where(o)).c_str());
                return completed;
            }
            if (!ready)
                continue;
            if (l.kind == WARP_COLLECTIVE) {
                /* an instruction of the whole warp: one call computes every lane's registers */
                void *data[32];
                for (int j = 0; j < 32; j++)
                    data[j] = reinterpret_cast<void *>((uintptr_t)g_lanes[(size_t)(w0 + j)].bits);
                l.collective(data);
                if (!g_fault.empty()) {
                    char at[512];
                    snprintf(at, sizeof at, " (%s at %s:%d, warp of threads %d-%d)", l.name, l.file, l.line, w0,
                             w0 + 31);
                    g_fault += at;
                    return completed;
                }
                for (int j = 0; j < 32; j++)
                    g_lanes[(size_t)(w0 + j)].state = LANE_RUNNABLE;
                completed++;
                continue;
            }
            /* Every lane of the mask is here: compute each one's result from the values. */
            uint64_t ballot = 0;
            for (int j = 0; j < 32; j++)
                if ((l.mask >> j & 1u) && g_lanes[(size_t)(w0 + j)].bits)
                    ballot |= 1ull << j;
            for (int j = 0; j < 32; j++) {
                if (!(l.mask >> j & 1u))
                    continue;
                Lane &o = g_lanes[(size_t)(w0 + j)];
                switch (l.kind) {
                case WARP_BALLOT: o.result = ballot; break;
                case WARP_ANY: o.result = ballot != 0; break;
                case WARP_ALL: o.result = ballot == (uint64_t)l.mask; break;
                case WARP_SYNC: o.result = 0; break;
                default: {
                    const int src = shuffle_source(o, j);
                    if (!(l.mask >> src & 1u)) {
                        fault("thread %d's %s at %s:%d reads lane %d, which is not in the mask 0x%08x",
                              w0 + j, op_name(l), l.file, l.line, src, l.mask);
                        return completed;
                    }
                    o.result = g_lanes[(size_t)(w0 + src)].bits;
                }
                }
            }
            for (int j = 0; j < 32; j++)
                if (l.mask >> j & 1u)
                    g_lanes[(size_t)(w0 + j)].state = LANE_RUNNABLE;
            completed++;
        }
    }
    return completed;
}

/* Release the barrier when every live thread waits at it, at one site. */
bool release_barrier(int n)
{
    const Lane *first = nullptr;
    for (int i = 0; i < n; i++) {
        const Lane &l = g_lanes[(size_t)i];
        if (l.state == LANE_EXITED)
            continue;
        if (l.state != LANE_AT_BARRIER)
            return false;
        if (!first)
            first = &l;
        else if (l.line != first->line || strcmp(l.file, first->file) != 0)
            return false;
    }
    if (!first)
        return false;
    for (int i = 0; i < n; i++)
        if (g_lanes[(size_t)i].state == LANE_AT_BARRIER)
            g_lanes[(size_t)i].state = LANE_RUNNABLE;
    return true;
}

/* Run one block to its end or its first fault. */
void run_block(int n, bool descending)
{
    for (int i = 0; i < n; i++) {
        Lane &l = g_lanes[(size_t)i];
        l.regs.thread_idx.x = (unsigned)(i % (int)cur_block_dim.x);
        l.regs.thread_idx.y = (unsigned)(i / (int)cur_block_dim.x % (int)cur_block_dim.y);
        l.regs.thread_idx.z = (unsigned)(i / (int)(cur_block_dim.x * cur_block_dim.y));
        l.state = LANE_RUNNABLE;
        l.file = "";
        l.line = 0;
        l.copies.clear();
        l.groups = 0;
        fiber_start(i, lane_main, &l);
    }
    for (;;) {
        int live = 0;
        for (int s = 0; s < n; s++) {
            const int i = descending ? n - 1 - s : s;
            Lane &l = g_lanes[(size_t)i];
            if (l.state == LANE_RUNNABLE) {
                cur_lane = &l.regs;
                if (fiber_resume(i)) {
                    l.state = LANE_EXITED;
                    /* A copy never waited for is data the kernel meant to read and never did
                     * (or read without its wait: the 0xFF bytes then show as NaN). */
                    if (!l.copies.empty())
                        fault("thread %d exited with %zu cp.async copies no cp.async.wait_group completed (the "
                              "first issued at %s:%d)",
                              i, l.copies.size(), l.copies[0].file, l.copies[0].line);
                }
            }
            live += l.state != LANE_EXITED;
        }
        cur_lane = nullptr;
        if (live == 0)
            return;
        const int completed = resolve_warps(n);
        if (!g_fault.empty())
            return;
        if (completed > 0)
            continue;
        if (release_barrier(n))
            continue;
        fault("deadlock: %s", describe_waits(n).c_str());
        return;
    }
}

bool config_ok(const LaunchConfig &c)
{
    const dim3 b = c.block, g = c.grid;
    if (b.x < 1 || b.y < 1 || b.z < 1 || b.x > 1024 || b.y > 1024 || b.z > 64 ||
        (uint64_t)b.x * b.y * b.z > 1024)
        return false;
    if (g.x < 1 || g.y < 1 || g.z < 1 || g.x > 2147483647u || g.y > 65535 || g.z > 65535)
        return false;
    return true;
}

const char *lane_order()
{
    const char *e = getenv("LB_EMU_LANE_ORDER");
    return e && *e ? e : "alternate";
}

} // namespace

uint64_t warp_op(WarpOpKind kind, unsigned mask, uint64_t bits, int arg, int width, const char *file,
                 int line)
{
    Lane *l = reinterpret_cast<Lane *>(cur_lane);
    l->state = LANE_AT_WARP;
    l->kind = kind;
    l->mask = mask;
    l->bits = bits;
    l->arg = arg;
    l->width = width;
    l->file = file;
    l->line = line;
    fiber_yield();
    cur_lane = &l->regs;
    return l->result;
}

void warp_collective(const char *name, void (*run)(void *const *lanes), void *data, const char *file, int line)
{
    Lane *l = reinterpret_cast<Lane *>(cur_lane);
    l->name = name;
    l->collective = run;
    /* .aligned: every lane of the warp executes it */
    (void)warp_op(WARP_COLLECTIVE, 0xffffffffu, (uint64_t)(uintptr_t)data, 0, 32, file, line);
}

void warp_fault(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fault("%s", buf);
}

bool shared_range_valid(const void *p, size_t bytes)
{
    const char *c = static_cast<const char *>(p);
    if (g_dynamic && c >= static_cast<const char *>(g_dynamic) &&
        c + bytes <= static_cast<const char *>(g_dynamic) + g_dynamic_bytes)
        return true;
    for (const SharedSlot &sl : g_shared)
        if (c >= static_cast<const char *>(sl.p) && c + bytes <= static_cast<const char *>(sl.p) + sl.bytes)
            return true;
    return false;
}

void *dynamic_shared()
{
    if (!g_dynamic) {
        fault("dynamic shared memory used by a launch that gave none (its third argument is 0)");
        static unsigned char none[16];
        return none;
    }
    return g_dynamic;
}

/* cp.async: the destination is undefined until a wait covers the copy, so it is filled with 0xFF
 * bytes (NaN) now and written at the wait: a read before it shows. */
void cp_async(void *dst, const void *src, size_t bytes, size_t src_bytes, const char *file, int line)
{
    Lane *l = reinterpret_cast<Lane *>(cur_lane);
    const int i = (int)(l - g_lanes.data());
    if ((uintptr_t)dst % bytes != 0 || (uintptr_t)src % bytes != 0 || !shared_range_valid(dst, bytes)) {
        fault("thread %d's cp.async at %s:%d: destination %p is not %zu bytes of shared memory, or it or the source "
              "%p is not %zu-byte aligned",
              i, file, line, dst, bytes, src, bytes);
        return;
    }
    if (src_bytes > 0 && !device_range_valid(src, src_bytes)) {
        fault("thread %d's cp.async at %s:%d reads %zu bytes at %p, outside every allocation", i, file, line,
              src_bytes, src);
        return;
    }
    memset(dst, 0xFF, bytes);
    l->copies.push_back(AsyncCopy{dst, src, bytes, src_bytes, 0, file, line});
}

void cp_async_commit()
{
    Lane *l = reinterpret_cast<Lane *>(cur_lane);
    l->groups++;
    for (AsyncCopy &c : l->copies)
        if (c.group == 0)
            c.group = l->groups;
}

void cp_async_wait(int pending)
{
    Lane *l = reinterpret_cast<Lane *>(cur_lane);
    std::vector<AsyncCopy> left;
    for (const AsyncCopy &c : l->copies) {
        if (c.group != 0 && c.group <= l->groups - pending) {
            memcpy(c.dst, c.src, c.src_bytes);
            memset(static_cast<char *>(c.dst) + c.src_bytes, 0, c.bytes - c.src_bytes);
        } else {
            left.push_back(c);
        }
    }
    l->copies.swap(left);
}

void block_barrier(const char *file, int line)
{
    Lane *l = reinterpret_cast<Lane *>(cur_lane);
    l->state = LANE_AT_BARRIER;
    l->file = file;
    l->line = line;
    fiber_yield();
    cur_lane = &l->regs;
}

void *shared_slot(const char *file, int line, size_t bytes)
{
    for (const SharedSlot &sl : g_shared)
        if (sl.line == line && strcmp(sl.file, file) == 0)
            return sl.p;
    /* First use in this launch: its first block has just started, so a fresh buffer of 0xFF is
     * what the block would see. */
    g_shared_total += bytes;
    if (g_shared_total > kSharedLimit)
        fault("static shared memory of %zu bytes is past the 48 KiB a block may declare (%s:%d)",
              g_shared_total, file, line);
    void *p = nullptr;
    if (posix_memalign(&p, 16, bytes ? bytes : 1) != 0 || !p) {
        fprintf(stderr, "linbench gpu emulator: out of host memory for shared memory\n");
        abort();
    }
    memset(p, 0xFF, bytes);
    g_shared.push_back(SharedSlot{file, line, bytes, p});
    return p;
}

void launch_grid(const LaunchConfig &cfg, void (*body)(void *ctx), void *ctx)
{
    if (sticky_error() != cudaSuccess)
        return;
    if (!config_ok(cfg)) {
        set_last_error(cudaErrorInvalidConfiguration);
        return;
    }
    /* Past 48 KiB of dynamic shared memory a kernel must have opted in (cudaFuncSetAttribute), as
     * on the GPU, which otherwise refuses the launch. */
    if (cfg.shared_bytes > ((size_t)48 << 10) && cfg.shared_bytes > (size_t)func_max_dynamic_shared(cfg.func)) {
        set_last_error(cudaErrorInvalidValue);
        return;
    }
    if (!stream_valid(cfg.stream)) {
        set_last_error(cudaErrorInvalidResourceHandle);
        return;
    }
    const cudaError_t load = load_kernel(cfg.func);
    if (load != cudaSuccess) {
        set_last_error(load);
        return;
    }
    lock_device();
    const int n = (int)(cfg.block.x * cfg.block.y * cfg.block.z);
    if (!fibers_reserve(n)) {
        unlock_device();
        set_last_error(cudaErrorMemoryAllocation);
        return;
    }
    if ((int)g_lanes.size() < n)
        g_lanes.resize((size_t)n);
    g_body = body;
    g_ctx = ctx;
    g_fault.clear();
    g_dynamic_bytes = cfg.shared_bytes;
    g_dynamic = nullptr;
    if (g_dynamic_bytes && (posix_memalign(&g_dynamic, 16, g_dynamic_bytes) != 0 || !g_dynamic)) {
        fprintf(stderr, "linbench gpu emulator: out of host memory for dynamic shared memory\n");
        abort();
    }
    cur_block_dim = cfg.block;
    cur_grid_dim = cfg.grid;
    const char *order = lane_order();
    const bool force_up = strcmp(order, "up") == 0, force_down = strcmp(order, "down") == 0;
    uint64_t block_no = 0;
    const unsigned long long launch_no = g_launches++;
    for (unsigned z = 0; z < cfg.grid.z && g_fault.empty(); z++)
        for (unsigned y = 0; y < cfg.grid.y && g_fault.empty(); y++)
            for (unsigned x = 0; x < cfg.grid.x && g_fault.empty(); x++, block_no++) {
                cur_block_idx.x = x;
                cur_block_idx.y = y;
                cur_block_idx.z = z;
                for (const SharedSlot &sl : g_shared)
                    memset(sl.p, 0xFF, sl.bytes);
                if (g_dynamic)
                    memset(g_dynamic, 0xFF, g_dynamic_bytes);
                const bool descending = force_down || (!force_up && ((block_no + launch_no) & 1u));
                run_block(n, descending);
            }
    for (const SharedSlot &sl : g_shared)
        free(sl.p);
    g_shared.clear();
    g_shared_total = 0;
    free(g_dynamic);
    g_dynamic = nullptr;
    g_dynamic_bytes = 0;
    std::string f;
    f.swap(g_fault);
    unlock_device();
    if (!f.empty())
        report_fault(cudaErrorLaunchFailure, "%s launched at %s:%d with grid (%u,%u,%u) x block (%u,%u,%u), block (%u,%u,%u): %s",
                     cfg.kernel, cfg.file, cfg.line, cfg.grid.x, cfg.grid.y, cfg.grid.z, cfg.block.x,
                     cfg.block.y, cfg.block.z, cur_block_idx.x, cur_block_idx.y, cur_block_idx.z, f.c_str());
}

} // namespace lb_emu

extern "C" unsigned long long lb_emu_launch_count(void) { return lb_emu::g_launches; }
