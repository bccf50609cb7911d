/* User-space fibers for the threads of an emulated block (gpu/emu/scheduler.cc): one scheduler
 * context and a pool of fiber stacks reused from block to block. Boost.Context's fcontext
 * switches where the build found it (faster than ucontext, whose swapcontext makes a system call
 * per switch); ucontext otherwise, or when LB_EMU_FIBERS=ucontext. Every stack switch is told to
 * AddressSanitizer in the sanitized build. C++ only, internal to gpu/emu/. */
#ifndef LB_GPU_EMU_FIBER_H
#define LB_GPU_EMU_FIBER_H

#include <stddef.h>

namespace lb_emu {

typedef void (*FiberBody)(void *arg);

/* Make sure fibers 0..count-1 exist with their stacks; false when the stacks cannot be mapped. */
bool fibers_reserve(int count);
/* Prepare fiber i to run body(arg) from its start at the next fiber_resume (any earlier run of
 * fiber i, finished or abandoned, is forgotten). */
void fiber_start(int i, FiberBody body, void *arg);
/* From the scheduler: run fiber i until it yields or its body returns; true when it returned. */
bool fiber_resume(int i);
/* From inside a fiber: back to the scheduler, until the next fiber_resume of this fiber. */
void fiber_yield();
/* "fcontext" or "ucontext". */
const char *fiber_impl();

} // namespace lb_emu

#endif
