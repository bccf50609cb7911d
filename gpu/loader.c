/* lb_cuda_backend_open for the linbench binary: loads linbench-cuda.so on first use (from
 * $LINBENCH_CUDA_MODULE, beside the binary, then the install dir) so the binary links no CUDA. A
 * missing CUDA library is "no CUDA device" naming what to install; an absent or foreign module is
 * a broken installation, or the variable's fault when it chose it. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attn/ops.h"
#include "attn/base/status.h"
#include "gpu/module.h"

#ifndef LB_CUDA_MODULE_INSTALLED
#define LB_CUDA_MODULE_INSTALLED "/usr/local/lib/linbench/" LB_CUDA_MODULE_FILE
#endif

static const LbCudaModule *lb_loaded;

/* dir/file of the running binary into buf; 0 when /proc/self/exe cannot be read. */
static int beside_binary(char *buf, size_t size)
{
    char exe[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return 0;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    const int w = snprintf(buf, size, "%s/%s", exe, LB_CUDA_MODULE_FILE);
    return w > 0 && (size_t)w < size;
}

/* Whether a dlopen message is about a library the module needs rather than the module itself. */
static int missing_dependency(const char *err, const char *path)
{
    return strstr(err, "cannot open shared object file") && strncmp(err, path, strlen(path)) != 0;
}

static int lb_cuda_load(void)
{
    if (lb_loaded)
        return LB_OK;
    char near[PATH_MAX + 32];
    const char *env = getenv("LINBENCH_CUDA_MODULE");
    const char *paths[3];
    int count = 0;
    if (env && *env)
        paths[count++] = env;
    else {
        if (beside_binary(near, sizeof near))
            paths[count++] = near;
        paths[count++] = LB_CUDA_MODULE_INSTALLED;
    }
    /* the user's choice of module, said wherever a message names the path */
    const char *chosen = env && *env ? " (named by LINBENCH_CUDA_MODULE)" : "";
    const char *remedy = *chosen ? "point LINBENCH_CUDA_MODULE at this build's " LB_CUDA_MODULE_FILE ", or unset it"
                                 : "reinstall linbench";
    if (*chosen && access(env, F_OK) != 0)
        return LB_FAIL(LB_ERR_DEVICE,
                       "LINBENCH_CUDA_MODULE is \"%s\": %s: should be the path of a %s, or unset to use the one beside linbench or installed",
                       env, strerror(errno), LB_CUDA_MODULE_FILE);
    for (int i = 0; i < count; i++) {
        if (access(paths[i], F_OK) != 0)
            continue;
        void *h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *err = dlerror();
            if (err && missing_dependency(err, paths[i]))
                return LB_FAIL(LB_ERR_NODEVICE,
                               "no CUDA device: --device cuda needs the CUDA runtime and cuBLAS libraries, and the loader cannot find them (%s); install the CUDA Toolkit or NVIDIA's runtime packages (cuda-cudart, libcublas) and add their lib64 directory to ld.so.conf.d or LD_LIBRARY_PATH, or try --device cpu",
                               err);
            return LB_FAIL(LB_ERR_DEVICE, "cannot load the CUDA backend %s%s: %s", paths[i], chosen,
                           err ? err : "unknown error");
        }
        const LbCudaModule *(*entry)(void) = NULL;
        void *sym = dlsym(h, LB_CUDA_MODULE_SYMBOL);
        memcpy(&entry, &sym, sizeof entry); /* POSIX: the bits are the function's */
        const LbCudaModule *m = entry ? entry() : NULL;
        if (!m || m->abi != LB_CUDA_MODULE_ABI) {
            dlclose(h);
            return LB_FAIL(LB_ERR_DEVICE, "the CUDA backend %s%s is from another build of linbench (interface %d, this binary needs %d); %s",
                           paths[i], chosen, m ? m->abi : -1, LB_CUDA_MODULE_ABI, remedy);
        }
        if (m->ops_bytes != sizeof(LbOps) || m->backend_bytes != sizeof(LbBackend) ||
            m->device_info_bytes != sizeof(LbDeviceInfo)) {
            const size_t ops = m->ops_bytes, be = m->backend_bytes, info = m->device_info_bytes;
            dlclose(h);
            return LB_FAIL(LB_ERR_DEVICE, "the CUDA backend %s%s is from another build of linbench (ops table, backend and device info of %zu, %zu and %zu bytes; this binary's are %zu, %zu and %zu); %s",
                           paths[i], chosen, ops, be, info, sizeof(LbOps), sizeof(LbBackend), sizeof(LbDeviceInfo), remedy);
        }
        lb_loaded = m; /* kept loaded until exit: backends opened from it live that long */
        return LB_OK;
    }
    return LB_FAIL(LB_ERR_DEVICE, "the CUDA backend module %s is missing (looked in %s%s%s); reinstall linbench, or try --device cpu",
                   LB_CUDA_MODULE_FILE, paths[0], count > 1 ? " and " : "", count > 1 ? paths[1] : "");
}

int lb_cuda_backend_open(int index, LbDtype dtype, int tf32, LbBackend **out)
{
    *out = NULL;
    LB_TRY(lb_cuda_load());
    return lb_loaded->backend_open(index, dtype, tf32, out);
}

const char *lb_cuda_backend_kind(void) { return "CUDA"; }
