/* A stand-in for libnvidia-ml.so.1 with the functions tony calls
 * (runtime/metrics/nvml.hpp), for machines without an NVIDIA driver. What
 * it reports comes from the environment:
 *
 *   FAKE_NVML_DEVICES    the device count (default 4)
 *   FAKE_NVML_PROCESSES  "pid:device:MiB,..." compute processes (default none)
 *   FAKE_NVML_FAIL_INIT  when set, nvmlInit_v2 fails (NVML error 9)
 *
 * Device i reports 16 GiB of memory, (i + 1) GiB used, and a utilisation
 * that moves with time (so plots show something): 50 + 40 sin(t / 4 + i) %. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int nvmlReturn_t;
typedef struct fake_device* nvmlDevice_t;
typedef struct {
  unsigned int gpu;
  unsigned int memory;
} nvmlUtilization_t;
typedef struct {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;
typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

struct fake_device {
  unsigned int index;
};

static struct fake_device devices[64];

static unsigned int device_count(void) {
  const char* n = getenv("FAKE_NVML_DEVICES");
  unsigned int k = n ? (unsigned int)atoi(n) : 4u;
  return k > 64 ? 64 : k;
}

nvmlReturn_t nvmlInit_v2(void) {
  return getenv("FAKE_NVML_FAIL_INIT") ? 9 : 0;
}

nvmlReturn_t nvmlShutdown(void) {
  return 0;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  *count = device_count();
  return 0;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (index >= device_count())
    return 2; /* NVML_ERROR_INVALID_ARGUMENT */
  devices[index].index = index;
  *device = &devices[index];
  return 0;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* u) {
  double t = (double)time(NULL);
  u->gpu = (unsigned int)(50.0 + 40.0 * sin(t / 4.0 + device->index));
  u->memory = 30;
  return 0;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* m) {
  m->total = 16ull << 30;
  m->used = (unsigned long long)(device->index + 1) << 30;
  m->free = m->total - m->used;
  return 0;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device,
                                                  unsigned int* count,
                                                  nvmlProcessInfo_v1_t* infos) {
  const char* spec = getenv("FAKE_NVML_PROCESSES");
  unsigned int n = 0;
  char buf[1024];
  if (spec) {
    strncpy(buf, spec, sizeof(buf) - 1);
    buf[sizeof(buf) - 1] = '\0';
    for (char* item = strtok(buf, ","); item; item = strtok(NULL, ",")) {
      unsigned int pid = 0, dev = 0, mib = 0;
      if (sscanf(item, "%u:%u:%u", &pid, &dev, &mib) != 3 || dev != device->index)
        continue;
      if (n < *count) {
        infos[n].pid = pid;
        infos[n].usedGpuMemory = (unsigned long long)mib << 20;
      }
      ++n;
    }
  }
  if (n > *count) {
    *count = n;
    return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
  }
  *count = n;
  return 0;
}
