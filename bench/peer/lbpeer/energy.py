"""The device's energy counter, as linbench reads it (docs/METHOD.md, "Energy"; gpu/nvml.c,
attn/cpu/cpu_energy.c), so that the peer's J per sequence means what linbench's does:

  - on a GPU, NVML's total energy since the driver loaded (nvmlDeviceGetTotalEnergyConsumption,
    Volta and later, in mJ), through ctypes from libnvidia-ml.so.1, the library the driver
    installs (no Python NVML package needed), the device found by its PCI bus id as linbench
    finds it;
  - on the CPU, the powercap (RAPL) package zone, /sys/class/powercap/intel-rapl:0, or the
    directory LB_POWERCAP_ZONE names (as for linbench: tests point it at files of their own);
    energy_uj wraps to 0 past max_energy_range_uj and is unwrapped.

open_counter(device) gives (counter, None), or (None, why) where no counter can be read; a
counter's joules() is the energy since its first reading, or raises Unsupported with why."""
import ctypes
import os


class Unsupported(Exception):
    """No energy can be read: the message says why (one line)."""


class NvmlCounter:
    def __init__(self, pci_bus_id):
        try:
            lib = ctypes.CDLL("libnvidia-ml.so.1")
        except OSError as e:
            raise Unsupported("no energy counter: libnvidia-ml.so.1 (NVML) cannot be loaded: %s" % e) from None
        try:
            init, by_pci = lib.nvmlInit_v2, lib.nvmlDeviceGetHandleByPciBusId_v2
        except AttributeError as e:
            raise Unsupported("no energy counter: NVML lacks %s" % e) from None
        if init() != 0:
            raise Unsupported("no energy counter: nvmlInit_v2 failed")
        handle = ctypes.c_void_p()
        if by_pci(pci_bus_id.encode(), ctypes.byref(handle)) != 0:
            raise Unsupported("no energy counter: NVML has no device at PCI bus id %s" % pci_bus_id)
        try:
            self._get = lib.nvmlDeviceGetTotalEnergyConsumption
        except AttributeError:
            raise Unsupported("no energy counter: this driver's NVML has no nvmlDeviceGetTotalEnergyConsumption "
                              "(before Volta)") from None
        self._handle = handle
        self._first = None

    def joules(self):
        mj = ctypes.c_ulonglong()
        rc = self._get(self._handle, ctypes.byref(mj))
        if rc != 0:
            raise Unsupported("no energy counter: nvmlDeviceGetTotalEnergyConsumption returned %d%s"
                              % (rc, " (not supported on this GPU)" if rc == 3 else ""))
        if self._first is None:
            self._first = mj.value
        return (mj.value - self._first) / 1000.0


class PowercapCounter:
    def __init__(self):
        z = os.environ.get("LB_POWERCAP_ZONE")
        self.zone = z if z else "/sys/class/powercap/intel-rapl:0"
        self._started, self._last, self._total = False, 0, 0

    def _read(self, name):
        path = os.path.join(self.zone, name)
        try:
            with open(path) as f:
                text = f.read().split()
        except OSError as e:
            raise Unsupported("no energy counter: %s cannot be read: %s (the kernel exposes no RAPL package counter "
                              "here, or only to root)" % (path, e.strerror)) from None
        if not text or not text[0].isdigit():
            raise Unsupported("no energy counter: %s holds no number" % path)
        return int(text[0])

    def joules(self):
        uj, top = self._read("energy_uj"), self._read("max_energy_range_uj")
        if not self._started:
            self._started = True
        elif uj >= self._last:
            self._total += uj - self._last
        else:  # wrapped past max_energy_range_uj to 0
            self._total += top - self._last + uj + 1
        self._last = uj
        return self._total / 1e6


def open_counter(dev):
    """(counter, None) for the device (lbpeer/device.py's Device), or (None, why)."""
    try:
        counter = NvmlCounter(dev.pci_bus_id) if dev.kind == "cuda" else PowercapCounter()
        counter.joules()
        return counter, None
    except Unsupported as e:
        return None, str(e)
