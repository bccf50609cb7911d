/* The emulated GPU's few entry points of its own, for tests (tests/gpu/) and `linbench info`:
 * everything else it offers is the CUDA runtime, cuBLAS and cuBLASLt API under their own names
 * (gpu/emu/README.md). Built only with -Dgpu_emulator=true or into the gpu-emu test programs. */
#ifndef LB_GPU_EMU_H
#define LB_GPU_EMU_H

#ifdef __cplusplus
extern "C" {
#endif

/* The last fault the emulator found in device code or a library call ("" when none), with the
 * kernel, block, lanes and file:line it concerns. */
const char *lb_emu_fault_message(void);
/* Forget the sticky error and the fault, as a process restart would on a GPU; tests that provoke
 * a fault on purpose call it before going on. */
void lb_emu_reset(void);
/* Kernel launches and blocks run since the start, for tests that must see a kernel ran. */
unsigned long long lb_emu_launch_count(void);

#ifdef __cplusplus
}
#endif

#endif
