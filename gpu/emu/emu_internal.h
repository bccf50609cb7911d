/* What the parts of the emulated GPU share (gpu/emu/README.md): the runtime's error state and
 * memory table (runtime.cc), which the scheduler (scheduler.cc) and the cuBLAS/cuBLASLt reference
 * (cublas.cc, cublaslt.cc) report to and check against. C++ only, internal to gpu/emu/. */
#ifndef LB_GPU_EMU_INTERNAL_H
#define LB_GPU_EMU_INTERNAL_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

namespace lb_emu {

/* A fault of device code (a deadlock, a shuffle across sites, an access outside every
 * allocation): printed on stderr once, kept for lb_emu_fault_message, and made the sticky error
 * every later runtime call returns, as a kernel fault is on a GPU. */
void report_fault(cudaError_t err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A non-sticky error for the next cudaGetLastError (a bad launch configuration). */
void set_last_error(cudaError_t err);
/* The sticky error, cudaSuccess when none. */
cudaError_t sticky_error();
/* Whether s is 0 (the legacy stream) or a live stream of the current device: what a launch or a
 * library call may use (the programming guide: a launch into another device's stream fails). */
bool stream_valid(cudaStream_t s);
/* Whether [p, p + bytes) lies inside one live cudaMalloc block of the current device (a kernel
 * or library call reaches no other device's memory: no peer access here). */
bool device_range_valid(const void *p, size_t bytes);
/* Whether the environment variable is set to something other than "" or "0" (the switches). */
bool env_flag(const char *name);
/* Whether cudaGetDeviceCount finds the device (what cuBLAS and cuBLASLt need to create a
 * handle); clears the error when it does not. */
bool device_present();
/* A size from the environment (bytes, or with K, M, G), `fallback` when unset. */
size_t env_size(const char *name, size_t fallback);
/* Serialises launches and library calls of several host threads (static shared memory and the
 * fiber scheduler are one per process). */
void lock_device();
void unlock_device();

/* --- for the warp-collective instructions (tensor_core.cc; scheduler.cc runs them) --------- */
/* One .sync.aligned instruction of the calling lane's warp: blocks until all 32 lanes are at it
 * (same name, same site), then run(lanes) is called once with every lane's `data` in lane order,
 * and every lane goes on. A lane missing from the warp, exited, or waiting elsewhere is a fault. */
void warp_collective(const char *name, void (*run)(void *const *lanes), void *data, const char *file, int line);
/* A fault of the running block (from inside a collective): the launch fails with it. */
void warp_fault(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Whether [p, p + bytes) lies inside one shared array or the dynamic shared memory of the block. */
bool shared_range_valid(const void *p, size_t bytes);
/* cudaFuncSetAttribute(func, cudaFuncAttributeMaxDynamicSharedMemorySize, ...)'s value for func,
 * 0 when never set (runtime.cc). */
int func_max_dynamic_shared(const void *func);
/* Lazy loading, CUDA's default on Linux since 12.2: a kernel's code goes into device memory on its
 * first launch (or first cudaFuncSetAttribute) on a device, outside every cudaMalloc block. With
 * LB_EMU_MODULE_BYTES=SIZE each kernel takes SIZE bytes of the current device then, and while they
 * are not free the call fails with cudaErrorMemoryAllocation (not sticky; the next one tries
 * again), as on a GPU whose memory an application has allocated almost all of. Unset: no cost. */
cudaError_t load_kernel(const void *func);

} // namespace lb_emu

#endif
