/* The emulated GPU's CUDA runtime: every cudart entry point gpu/ and its tests call, under its
 * own name and with the signature of the toolkit's cuda_runtime_api.h, behaving as NVIDIA's
 * runtime API reference documents it:
 *   - LB_EMU_DEVICES devices (1 by default, up to 64), all the same model, named "linbench
 *     emulated GPU ..." so no figure from one can pass for a GPU measurement, compute capability
 *     9.0, one multiprocessor, no clocks, told apart by their cudaDeviceProp.uuid; the current
 *     device is per host thread (cudaSetDevice, 0 at first), as in the runtime;
 *   - device memory is host memory, with a capacity per device from LB_EMU_MEMORY (a size such as
 *     512M or 2G; 512 MiB by default) so out-of-memory paths can be driven: cudaMalloc past the
 *     current device's fails with cudaErrorMemoryAllocation, which cudaGetLastError clears, as on
 *     a GPU; LB_EMU_MEMORY_HIDDEN holds back memory that cudaMemGetInfo still reports free. Each
 *     device keeps its own allocation table; each block is its own heap allocation, so
 *     AddressSanitizer sees an access past its end;
 *   - copies and memsets check that the device side lies inside one live allocation of some
 *     device (cudaErrorInvalidValue otherwise; unified addressing lets a copy reach any device);
 *     kernels and library calls only the current device's memory (no peer access);
 *   - streams and events are handles checked on every use and belong to the device current when
 *     they were made, with the programming guide's rules ("Stream and Event Behavior"): a launch
 *     or library call into another device's stream, an event recorded on another device's
 *     stream, and the time between two devices' events are cudaErrorInvalidResourceHandle, while
 *     copies, synchronisation and destruction accept any device's; work runs when it is
 *     enqueued, so events are timed by the host clock and no asynchronous ordering is modelled;
 *   - a fault found in device code (scheduler.cc) or a library call is sticky: every later call
 *     returns it, as after a kernel fault on a GPU (on every device here: one error state).
 * LB_EMU_NO_DEVICE=1 makes the device vanish (cudaErrorNoDevice); LB_EMU_FAIL, LB_EMU_DRIVER_VERSION,
 * LB_EMU_CC and LB_EMU_COMPUTE_MODE stand in for the machines a user's first run may meet;
 * LB_EMU_MODULE_BYTES=SIZE for lazy loading (load_kernel). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "gpu/emu/emu.h"
#include "gpu/emu/emu_internal.h"

namespace lb_emu {
namespace {

constexpr size_t kDefaultCapacity = (size_t)512 << 20;
constexpr int kSharedOptin = 227 << 10; /* dynamic shared memory a block may opt into (cc 9.0) */
constexpr int kMaxDevices = 64;

struct Event {
    bool recorded;
    double ms;
    int device; /* current when it was created */
};

/* One emulated device: its live cudaMalloc blocks (address -> bytes) and their total. */
struct Device {
    std::map<uintptr_t, size_t> allocs;
    size_t used = 0;
};

std::mutex g_mu;        /* the tables below */
std::recursive_mutex g_device_mu;
std::vector<Device> g_devices; /* device_count() of them, made on first use */
std::map<void *, int> g_streams; /* stream -> the device it belongs to */
std::set<Event *> g_events;
cudaError_t g_last = cudaSuccess, g_sticky = cudaSuccess;
std::string g_fault_msg;
thread_local int t_device = 0; /* cudaSetDevice's, per host thread as in the runtime */

double now_ms()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

size_t capacity()
{
    static size_t cap = 0;
    if (!cap) {
        cap = env_size("LB_EMU_MEMORY", kDefaultCapacity);
        if (cap < 1)
            cap = kDefaultCapacity;
    }
    return cap;
}

/* LB_EMU_MEMORY_HIDDEN: memory that cudaMemGetInfo counts as free but cudaMalloc cannot have, as
 * on a GPU where the driver and libraries hold memory of their own, so that the batch search's
 * step-down after a failed allocation runs. */
size_t hidden()
{
    static size_t h = (size_t)-1;
    if (h == (size_t)-1)
        h = env_size("LB_EMU_MEMORY_HIDDEN", 0);
    return h;
}

bool no_device() { return env_flag("LB_EMU_NO_DEVICE"); }

/* LB_EMU_DEVICES=N: how many devices cudaGetDeviceCount finds (1 by default, 1 to 64), so that
 * the use of several GPUs (--gpu N, one worker per GPU) runs without them. */
int device_count()
{
    static int count = 0;
    if (!count) {
        const char *e = getenv("LB_EMU_DEVICES");
        char *end = nullptr;
        const long v = e && *e ? strtol(e, &end, 10) : 1;
        if (e && *e && (*end || v < 1 || v > kMaxDevices)) {
            fprintf(stderr, "linbench gpu emulator: LB_EMU_DEVICES=\"%s\" is not a number of devices from 1 to %d; 1 used\n",
                    e, kMaxDevices);
            count = 1;
        } else {
            count = (int)v;
        }
    }
    return count;
}

bool device_valid(int device) { return device >= 0 && device < device_count() && !no_device(); }

/* The device's table; the caller holds g_mu. */
Device &device_locked(int device)
{
    if (g_devices.empty())
        g_devices.resize((size_t)device_count());
    return g_devices[(size_t)device];
}

/* LB_EMU_FAIL: the error cudaGetDeviceCount returns, as a driver would on a machine that cannot
 * run CUDA (tests/gpu/test_emu_open.c drives every explanation in gpu/open_errors.c). */
cudaError_t forced_failure()
{
    const char *e = getenv("LB_EMU_FAIL");
    if (!e || !*e)
        return cudaSuccess;
    if (strcmp(e, "insufficient-driver") == 0)
        return cudaErrorInsufficientDriver;
    if (strcmp(e, "devices-unavailable") == 0)
        return cudaErrorDevicesUnavailable;
    if (strcmp(e, "driver-mismatch") == 0)
        return cudaErrorSystemDriverMismatch;
    if (strcmp(e, "initialization") == 0)
        return cudaErrorInitializationError;
    return cudaErrorUnknown;
}

/* LB_EMU_CC=MAJOR.MINOR: the compute capability the device reports (9.0 by default). */
void compute_capability(int *major, int *minor)
{
    *major = 9;
    *minor = 0;
    const char *e = getenv("LB_EMU_CC");
    int a = 0, b = 0;
    if (e && sscanf(e, "%d.%d", &a, &b) == 2) {
        *major = a;
        *minor = b;
    }
}

/* The error a call returns: the sticky one when set; otherwise `e`, remembered for
 * cudaGetLastError when it is an error. */
cudaError_t ret(cudaError_t e)
{
    if (g_sticky != cudaSuccess)
        return g_sticky;
    if (e != cudaSuccess)
        g_last = e;
    return e;
}

/* Whether [p, p + bytes) lies inside one live block of `device`, or of any device when -1. */
bool range_valid_locked(const void *p, size_t bytes, int device)
{
    const uintptr_t a = (uintptr_t)p;
    for (int d = device < 0 ? 0 : device; d < (device < 0 ? device_count() : device + 1); d++) {
        const std::map<uintptr_t, size_t> &allocs = device_locked(d).allocs;
        auto it = allocs.upper_bound(a);
        if (it == allocs.begin())
            continue;
        --it;
        if (a >= it->first && a - it->first <= it->second && bytes <= it->second - (a - it->first))
            return true;
    }
    return false;
}

/* The device stream s belongs to (the legacy stream 0: the current device), -1 when s is not a
 * live stream. */
int stream_device(cudaStream_t s)
{
    if (s == nullptr)
        return t_device;
    std::lock_guard<std::mutex> g(g_mu);
    auto it = g_streams.find((void *)s);
    return it == g_streams.end() ? -1 : it->second;
}

} // namespace

/* A size from the environment: bytes, or a number with K, M, G (binary); `fallback` when unset
 * or not a size (said once on stderr). */
size_t env_size(const char *name, size_t fallback)
{
    const char *e = getenv(name);
    if (!e || !*e)
        return fallback;
    char *end = nullptr;
    const double v = strtod(e, &end);
    double mul = 1.0;
    if (end && (*end == 'K' || *end == 'k'))
        mul = 1024.0, end++;
    else if (end && (*end == 'M' || *end == 'm'))
        mul = 1048576.0, end++;
    else if (end && (*end == 'G' || *end == 'g'))
        mul = 1073741824.0, end++;
    if (end && *end == 'i')
        end++;
    if (end && (*end == 'B' || *end == 'b'))
        end++;
    if (!end || *end || !(v * mul >= 0.0) || v * mul > 1e15) {
        fprintf(stderr, "linbench gpu emulator: %s=\"%s\" is not a size such as 512M or 2G; ignored\n", name, e);
        return fallback;
    }
    return (size_t)(v * mul);
}

bool env_flag(const char *name)
{
    const char *e = getenv(name);
    return e && *e && *e != '0';
}

bool device_present()
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
        (void)cudaGetLastError();
        return false;
    }
    return true;
}

void report_fault(cudaError_t err, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    std::lock_guard<std::mutex> g(g_mu);
    if (g_sticky != cudaSuccess)
        return;
    g_sticky = err;
    g_fault_msg = buf;
    fprintf(stderr, "linbench gpu emulator: fault: %s\n", buf);
}

void set_last_error(cudaError_t err) { g_last = err; }
cudaError_t sticky_error() { return g_sticky; }

bool stream_valid(cudaStream_t s) { return stream_device(s) == t_device; }

bool device_range_valid(const void *p, size_t bytes)
{
    std::lock_guard<std::mutex> g(g_mu);
    return range_valid_locked(p, bytes, t_device);
}

std::map<const void *, int> g_func_dynamic_shared; /* cudaFuncSetAttribute's, by kernel */

int func_max_dynamic_shared(const void *func)
{
    std::lock_guard<std::mutex> g(g_mu);
    const auto it = g_func_dynamic_shared.find(func);
    return it == g_func_dynamic_shared.end() ? 0 : it->second;
}

std::set<std::pair<int, const void *>> g_loaded; /* (device, kernel) whose code is in its memory */

cudaError_t load_kernel(const void *func)
{
    const size_t bytes = env_size("LB_EMU_MODULE_BYTES", 0);
    if (!bytes)
        return cudaSuccess;
    std::lock_guard<std::mutex> g(g_mu);
    if (g_loaded.count({t_device, func}))
        return cudaSuccess;
    Device &dev = device_locked(t_device);
    if (capacity() - dev.used < bytes)
        return cudaErrorMemoryAllocation;
    dev.used += bytes;
    g_loaded.insert({t_device, func});
    return cudaSuccess;
}

void lock_device() { g_device_mu.lock(); }
void unlock_device() { g_device_mu.unlock(); }

} // namespace lb_emu

using namespace lb_emu;

extern "C" const char *lb_emu_fault_message(void) { return g_fault_msg.c_str(); }

extern "C" void lb_emu_reset(void)
{
    std::lock_guard<std::mutex> g(g_mu);
    g_sticky = cudaSuccess;
    g_last = cudaSuccess;
    g_fault_msg.clear();
}

/* --- kernel attributes ------------------------------------------------------------------------ */

/* Only the one the kernels set: more dynamic shared memory than the 48 KiB a launch gets without
 * it, up to the opt-in limit of compute capability 9.0 (227 KiB per block). */
cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    if (g_sticky != cudaSuccess)
        return g_sticky;
    if (!func || attr != cudaFuncAttributeMaxDynamicSharedMemorySize || value < 0 || value > kSharedOptin)
        return ret(cudaErrorInvalidValue);
    const cudaError_t load = load_kernel(func); /* an API call naming a kernel loads it */
    if (load != cudaSuccess)
        return ret(load);
    std::lock_guard<std::mutex> g(g_mu);
    g_func_dynamic_shared[func] = value;
    return cudaSuccess;
}

/* --- errors ---------------------------------------------------------------------------------- */

cudaError_t cudaGetLastError(void)
{
    if (g_sticky != cudaSuccess)
        return g_sticky;
    const cudaError_t e = g_last;
    g_last = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void) { return g_sticky != cudaSuccess ? g_sticky : g_last; }

const char *cudaGetErrorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorNotSupported: return "cudaErrorNotSupported";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorInsufficientDriver: return "cudaErrorInsufficientDriver";
    case cudaErrorDevicesUnavailable: return "cudaErrorDevicesUnavailable";
    case cudaErrorSystemDriverMismatch: return "cudaErrorSystemDriverMismatch";
    case cudaErrorInitializationError: return "cudaErrorInitializationError";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    default: return "cudaErrorUnknown";
    }
}

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorNotSupported: return "operation not supported";
    case cudaErrorLaunchFailure: return "unspecified launch failure (emulated GPU: see the fault above)";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorDevicesUnavailable: return "CUDA-capable device(s) is/are busy or unavailable";
    case cudaErrorSystemDriverMismatch: return "system has unsupported display driver / cuda driver combination";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered (emulated GPU: see the fault above)";
    default: return "unknown error";
    }
}

/* --- the device ------------------------------------------------------------------------------ */

cudaError_t cudaGetDeviceCount(int *count)
{
    if (!count)
        return ret(cudaErrorInvalidValue);
    if (no_device()) {
        *count = 0;
        return ret(cudaErrorNoDevice);
    }
    if (forced_failure() != cudaSuccess) {
        *count = 0;
        return ret(forced_failure());
    }
    *count = device_count();
    return ret(cudaSuccess);
}

cudaError_t cudaSetDevice(int device)
{
    if (!device_valid(device))
        return ret(cudaErrorInvalidDevice);
    t_device = device;
    return ret(cudaSuccess);
}

cudaError_t cudaGetDevice(int *device)
{
    if (!device)
        return ret(cudaErrorInvalidValue);
    *device = t_device;
    return ret(cudaSuccess);
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (!prop)
        return ret(cudaErrorInvalidValue);
    if (!device_valid(device))
        return ret(cudaErrorInvalidDevice);
    memset(prop, 0, sizeof *prop);
    /* One model, so every device has the name; the UUID tells them apart, as on a real node
     * ("lbemu" then zeros then the index, far from the random UUIDs NVIDIA's devices carry). */
    snprintf(prop->name, sizeof prop->name, "linbench emulated GPU (on the CPU; not a GPU measurement)");
    /* LB_EMU_OTHER_MODEL=I: device I is another model, as on a node mixing two kinds of GPU
     * (tests of sweep --gpus refusing to share a result between them). */
    const char *other = getenv("LB_EMU_OTHER_MODEL");
    if (other && *other && atoi(other) == device)
        snprintf(prop->name, sizeof prop->name, "linbench emulated GPU, other model (on the CPU; not a GPU measurement)");
    memcpy(prop->uuid.bytes, "lbemu", 5);
    prop->uuid.bytes[14] = (char)(device >> 8);
    prop->uuid.bytes[15] = (char)(device & 0xff);
    prop->totalGlobalMem = capacity();
    prop->sharedMemPerBlock = 48 << 10;
    prop->sharedMemPerBlockOptin = kSharedOptin;
    prop->regsPerBlock = 65536;
    prop->warpSize = 32;
    prop->maxThreadsPerBlock = 1024;
    prop->maxThreadsDim[0] = 1024;
    prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 2147483647;
    prop->maxGridSize[1] = 65535;
    prop->maxGridSize[2] = 65535;
    compute_capability(&prop->major, &prop->minor);
    prop->multiProcessorCount = 1;
    return ret(cudaSuccess);
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    if (!value)
        return ret(cudaErrorInvalidValue);
    if (!device_valid(device))
        return ret(cudaErrorInvalidDevice);
    switch (attr) {
    case cudaDevAttrMultiProcessorCount: *value = 1; break;
    case cudaDevAttrComputeCapabilityMajor: compute_capability(value, &device); break;
    case cudaDevAttrComputeCapabilityMinor: compute_capability(&device, value); break;
    case cudaDevAttrComputeMode: {
        const char *m = getenv("LB_EMU_COMPUTE_MODE");
        *value = m && strcmp(m, "prohibited") == 0 ? cudaComputeModeProhibited : cudaComputeModeDefault;
        break;
    }
    case cudaDevAttrMaxThreadsPerBlock: *value = 1024; break;
    case cudaDevAttrWarpSize: *value = 32; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = 48 << 10; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = kSharedOptin; break;
    default:
        /* Clocks and the rest: an emulated device has none to report. */
        *value = 0;
        return ret(cudaErrorNotSupported);
    }
    return ret(cudaSuccess);
}

/* A bus id in PCI domain ffff, which no real device uses: the driver's NVML, where one is
 * installed, finds no device by it (the emulator's clocks stay unknown), and the tests' stand-in
 * NVML (gpu/emu/nvml_standin.c) answers for these only. */
cudaError_t cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
    if (!pciBusId || len < 13)
        return ret(cudaErrorInvalidValue);
    if (!device_valid(device))
        return ret(cudaErrorInvalidDevice);
    snprintf(pciBusId, (size_t)len, "ffff:%02x:00.0", device);
    return ret(cudaSuccess);
}

cudaError_t cudaDriverGetVersion(int *v)
{
    if (!v)
        return ret(cudaErrorInvalidValue);
    /* LB_EMU_DRIVER_VERSION: what an older (or absent, 0) driver would say. */
    const char *e = getenv("LB_EMU_DRIVER_VERSION");
    *v = e && *e ? atoi(e) : CUDART_VERSION;
    return ret(cudaSuccess);
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
    if (!v)
        return ret(cudaErrorInvalidValue);
    *v = CUDART_VERSION;
    return ret(cudaSuccess);
}

cudaError_t cudaDeviceSynchronize(void) { return ret(cudaSuccess); }

/* --- memory ---------------------------------------------------------------------------------- */

cudaError_t cudaMalloc(void **ptr, size_t bytes)
{
    if (!ptr)
        return ret(cudaErrorInvalidValue);
    *ptr = nullptr;
    if (g_sticky != cudaSuccess)
        return g_sticky;
    if (bytes == 0)
        return ret(cudaSuccess);
    std::lock_guard<std::mutex> g(g_mu);
    Device &dev = device_locked(t_device);
    const size_t free_now = capacity() - dev.used;
    if (bytes > free_now || bytes > free_now - (hidden() < free_now ? hidden() : free_now)) {
        g_last = cudaErrorMemoryAllocation;
        return cudaErrorMemoryAllocation;
    }
    void *p = nullptr;
    /* 256-byte aligned as cudaMalloc's blocks are (the programming guide promises at least 256). */
    if (posix_memalign(&p, 256, bytes) != 0 || !p) {
        g_last = cudaErrorMemoryAllocation;
        return cudaErrorMemoryAllocation;
    }
    dev.allocs[(uintptr_t)p] = bytes;
    dev.used += bytes;
    *ptr = p;
    return cudaSuccess;
}

cudaError_t cudaFree(void *ptr)
{
    if (!ptr)
        return ret(cudaSuccess);
    std::lock_guard<std::mutex> g(g_mu);
    /* Any device's block: unified addressing tells the runtime whose it is. */
    for (int d = 0; d < device_count(); d++) {
        Device &dev = device_locked(d);
        auto it = dev.allocs.find((uintptr_t)ptr);
        if (it == dev.allocs.end())
            continue;
        dev.used -= it->second;
        dev.allocs.erase(it);
        free(ptr);
        return g_sticky != cudaSuccess ? g_sticky : cudaSuccess;
    }
    if (g_sticky != cudaSuccess)
        return g_sticky;
    g_last = cudaErrorInvalidValue;
    return cudaErrorInvalidValue;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    if (!free_bytes || !total_bytes)
        return ret(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> g(g_mu);
    *total_bytes = capacity();
    *free_bytes = capacity() - device_locked(t_device).used;
    return g_sticky != cudaSuccess ? g_sticky : cudaSuccess;
}

static cudaError_t emu_memcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    if (g_sticky != cudaSuccess)
        return g_sticky;
    if (bytes == 0)
        return cudaSuccess;
    if (!dst || !src)
        return ret(cudaErrorInvalidValue);
    bool dst_dev, src_dev;
    {
        std::lock_guard<std::mutex> g(g_mu);
        dst_dev = range_valid_locked(dst, bytes, -1);
        src_dev = range_valid_locked(src, bytes, -1);
    }
    bool ok;
    switch (kind) {
    case cudaMemcpyHostToDevice: ok = dst_dev; break;
    case cudaMemcpyDeviceToHost: ok = src_dev; break;
    case cudaMemcpyDeviceToDevice: ok = dst_dev && src_dev; break;
    case cudaMemcpyHostToHost: ok = true; break;
    case cudaMemcpyDefault: ok = true; break;
    default: ok = false;
    }
    if (!ok)
        return ret(cudaErrorInvalidValue);
    memmove(dst, src, bytes);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return emu_memcpy(dst, src, count, kind);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    if (stream_device(stream) < 0) /* a copy may go to another device's stream */
        return ret(cudaErrorInvalidResourceHandle);
    return emu_memcpy(dst, src, count, kind);
}

static cudaError_t emu_memset(void *dst, int value, size_t count)
{
    if (g_sticky != cudaSuccess)
        return g_sticky;
    if (count == 0)
        return cudaSuccess;
    bool valid;
    {
        std::lock_guard<std::mutex> g(g_mu);
        valid = range_valid_locked(dst, count, -1);
    }
    if (!valid)
        return ret(cudaErrorInvalidValue);
    memset(dst, value, count);
    return cudaSuccess;
}

cudaError_t cudaMemset(void *dst, int value, size_t count) { return emu_memset(dst, value, count); }

cudaError_t cudaMemsetAsync(void *dst, int value, size_t count, cudaStream_t stream)
{
    if (stream_device(stream) < 0)
        return ret(cudaErrorInvalidResourceHandle);
    return emu_memset(dst, value, count);
}

/* --- streams and events ---------------------------------------------------------------------- */

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
    (void)flags;
    if (!stream)
        return ret(cudaErrorInvalidValue);
    void *s = malloc(1);
    std::lock_guard<std::mutex> g(g_mu);
    g_streams[s] = t_device;
    *stream = (cudaStream_t)s;
    return g_sticky != cudaSuccess ? g_sticky : cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *stream) { return cudaStreamCreateWithFlags(stream, 0); }

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    std::lock_guard<std::mutex> g(g_mu);
    if (!stream || !g_streams.erase((void *)stream)) {
        g_last = cudaErrorInvalidResourceHandle;
        return g_sticky != cudaSuccess ? g_sticky : cudaErrorInvalidResourceHandle;
    }
    free((void *)stream);
    return g_sticky != cudaSuccess ? g_sticky : cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    if (stream_device(stream) < 0)
        return ret(cudaErrorInvalidResourceHandle);
    return ret(cudaSuccess);
}

static Event *event_of(cudaEvent_t e)
{
    std::lock_guard<std::mutex> g(g_mu);
    Event *ev = reinterpret_cast<Event *>(e);
    return g_events.count(ev) ? ev : nullptr;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    (void)flags;
    if (!event)
        return ret(cudaErrorInvalidValue);
    Event *ev = new Event{false, 0.0, t_device};
    std::lock_guard<std::mutex> g(g_mu);
    g_events.insert(ev);
    *event = reinterpret_cast<cudaEvent_t>(ev);
    return g_sticky != cudaSuccess ? g_sticky : cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event) { return cudaEventCreateWithFlags(event, 0); }

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    Event *ev = event_of(event);
    if (!ev)
        return ret(cudaErrorInvalidResourceHandle);
    {
        std::lock_guard<std::mutex> g(g_mu);
        g_events.erase(ev);
    }
    delete ev;
    return ret(cudaSuccess);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    Event *ev = event_of(event);
    if (!ev || stream_device(stream) < 0 || stream_device(stream) != ev->device)
        return ret(cudaErrorInvalidResourceHandle);
    ev->recorded = true;
    ev->ms = now_ms();
    return ret(cudaSuccess);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    return ret(event_of(event) ? cudaSuccess : cudaErrorInvalidResourceHandle);
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    Event *a = event_of(start), *b = event_of(end);
    if (!ms)
        return ret(cudaErrorInvalidValue);
    if (!a || !b || !a->recorded || !b->recorded || a->device != b->device)
        return ret(cudaErrorInvalidResourceHandle);
    *ms = (float)(b->ms - a->ms);
    return ret(cudaSuccess);
}
