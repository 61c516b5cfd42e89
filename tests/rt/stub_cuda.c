/* A stand-in libcuda.so.1 for testing libtilec_rt without a GPU: the CUDA
 * driver functions the runtime resolves, on one fake device of compute
 * capability $TILEC_STUB_CC (default 9.0), or none when $TILEC_STUB_NO_DEVICE
 * is set, recording what they are asked.
 *
 * A "code object" is text: "tilec-stub-cubin ENTRY SIZE,SIZE,...", the
 * kernel's symbol and the byte size of each kernel parameter (4, 8, or 128:
 * a tensor map), so that a launch can copy its parameters. Tests read the
 * record through tilec_stub_last_launch(), tilec_stub_last_tensor_map() and
 * tilec_stub_calls() (dlsym on this library). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_NOT_FOUND = 500,
};
enum { kMaxParams = 64, kEntryBytes = 256 };
static const unsigned kDefaultSharedLimit = 48 * 1024;

typedef struct Module {
  char entry[kEntryBytes];
  int numParams;
  int paramBytes[kMaxParams];
  int maxDynamicShared; /* cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) */
} Module;

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static int primaryContext; /* its address is the context handle */
static __thread void *current;
static __thread void *pushed[16];
static __thread int numPushed;
static char lastLaunch[8192];
static char lastTensorMap[1024];

#define CALLS(X) X(cuInit) X(cuModuleLoadData) X(cuModuleUnload) X(cuFuncSetAttribute) X(cuLaunchKernel) \
                 X(cuDevicePrimaryCtxRetain) X(cuTensorMapEncodeTiled)
#define COUNTER(name) static int calls_##name;
CALLS(COUNTER)
#define COUNT(name)                                                                                                    \
  pthread_mutex_lock(&mutex);                                                                                          \
  ++calls_##name;                                                                                                      \
  pthread_mutex_unlock(&mutex)

int tilec_stub_calls(const char *function) {
#define LOOKUP(name)                                                                                                   \
  if (strcmp(function, #name) == 0)                                                                                    \
    return calls_##name;
  CALLS(LOOKUP)
  return -1;
}

/* "entry=E grid=X,Y,Z block=X,Y,Z shared=S stream=P params=V,V,..." of the
 * last launch; each V is the parameter's bytes as an unsigned
 * little-endian integer in decimal (a tensor map: its first 8 bytes). */
const char *tilec_stub_last_launch(void) { return lastLaunch; }

int cuInit(unsigned flags) {
  COUNT(cuInit);
  if (getenv("TILEC_STUB_NO_DEVICE"))
    return CUDA_ERROR_NO_DEVICE;
  return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

int cuDeviceGet(int *device, int ordinal) {
  if (ordinal != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}

int cuDeviceGetAttribute(int *value, int attribute, int device) {
  const char *cc = getenv("TILEC_STUB_CC");
  int major = 9, minor = 0;
  if (cc && sscanf(cc, "%d.%d", &major, &minor) != 2)
    return CUDA_ERROR_INVALID_VALUE;
  if (device != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  if (attribute == 75) /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
    *value = major;
  else if (attribute == 76) /* ..._MINOR */
    *value = minor;
  else
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

int cuDevicePrimaryCtxRetain(void **context, int device) {
  COUNT(cuDevicePrimaryCtxRetain);
  if (device != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *context = &primaryContext;
  return CUDA_SUCCESS;
}

int cuCtxGetCurrent(void **context) {
  *context = current;
  return CUDA_SUCCESS;
}

int cuCtxSetCurrent(void *context) {
  current = context;
  return CUDA_SUCCESS;
}

int cuCtxGetDevice(int *device) {
  if (!current)
    return CUDA_ERROR_INVALID_CONTEXT;
  *device = 0;
  return CUDA_SUCCESS;
}

int cuCtxPushCurrent_v2(void *context) {
  if (!context || numPushed == 16)
    return CUDA_ERROR_INVALID_VALUE;
  pushed[numPushed++] = current;
  current = context;
  return CUDA_SUCCESS;
}

int cuCtxPopCurrent_v2(void **context) {
  if (numPushed == 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (context)
    *context = current;
  current = pushed[--numPushed];
  return CUDA_SUCCESS;
}

int cuModuleLoadData(void **module, const void *image) {
  COUNT(cuModuleLoadData);
  if (!current)
    return CUDA_ERROR_INVALID_CONTEXT;
  static const char magic[] = "tilec-stub-cubin ";
  const char *text = (const char *)image;
  if (strncmp(text, magic, sizeof magic - 1) != 0)
    return CUDA_ERROR_INVALID_IMAGE;
  Module *m = calloc(1, sizeof *m);
  text += sizeof magic - 1;
  size_t len = strcspn(text, " ");
  if (len == 0 || len >= kEntryBytes) {
    free(m);
    return CUDA_ERROR_INVALID_IMAGE;
  }
  memcpy(m->entry, text, len);
  text += len;
  while (*text == ' ' || *text == ',') {
    char *end;
    long bytes = strtol(text + 1, &end, 10);
    if (end == text + 1 || (bytes != 4 && bytes != 8 && bytes != 128) || m->numParams == kMaxParams) {
      free(m);
      return CUDA_ERROR_INVALID_IMAGE;
    }
    m->paramBytes[m->numParams++] = (int)bytes;
    text = end;
  }
  *module = m;
  return CUDA_SUCCESS;
}

int cuModuleGetFunction(void **function, void *module, const char *name) {
  Module *m = module;
  if (strcmp(m->entry, name) != 0)
    return CUDA_ERROR_NOT_FOUND;
  *function = m; /* a module holds one function */
  return CUDA_SUCCESS;
}

int cuModuleUnload(void *module) {
  COUNT(cuModuleUnload);
  if (!current)
    return CUDA_ERROR_INVALID_CONTEXT;
  free(module);
  return CUDA_SUCCESS;
}

int cuFuncSetAttribute(void *function, int attribute, int value) {
  COUNT(cuFuncSetAttribute);
  if (attribute != 8) /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
    return CUDA_ERROR_INVALID_VALUE;
  ((Module *)function)->maxDynamicShared = value;
  return CUDA_SUCCESS;
}

int cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned sharedBytes, void *stream, void **params, void **extra) {
  COUNT(cuLaunchKernel);
  Module *m = function;
  if (!current || extra)
    return CUDA_ERROR_INVALID_VALUE;
  /* As the driver: more than 48 KiB of dynamic shared memory needs the opt-in. */
  if (sharedBytes > kDefaultSharedLimit && sharedBytes > (unsigned)m->maxDynamicShared)
    return CUDA_ERROR_INVALID_VALUE;
  char record[sizeof lastLaunch];
  int n = snprintf(record, sizeof record, "entry=%s grid=%u,%u,%u block=%u,%u,%u shared=%u stream=%p params=",
                   m->entry, gx, gy, gz, bx, by, bz, sharedBytes, stream);
  for (int i = 0; i < m->numParams && n < (int)sizeof record; ++i) {
    uint64_t value = 0;
    memcpy(&value, params[i], m->paramBytes[i] < 8 ? (size_t)m->paramBytes[i] : 8);
    n += snprintf(record + n, sizeof record - n, "%s%llu", i ? "," : "", (unsigned long long)value);
  }
  pthread_mutex_lock(&mutex);
  memcpy(lastLaunch, record, sizeof record);
  pthread_mutex_unlock(&mutex);
  return CUDA_SUCCESS;
}

/* "type=T rank=R address=A dims=D0,D1 strides=S box=B0,B1 element_strides=E0,E1
 * interleave=I swizzle=W l2=L oob=O" of the last cuTensorMapEncodeTiled
 * (rank 2); the map's first 8 bytes are set to the address, the rest to 0. */
const char *tilec_stub_last_tensor_map(void) { return lastTensorMap; }

int cuTensorMapEncodeTiled(void *map, int type, unsigned rank, void *address, const uint64_t *dims,
                           const uint64_t *strides, const unsigned *box, const unsigned *elementStrides, int interleave,
                           int swizzle, int l2, int oob) {
  COUNT(cuTensorMapEncodeTiled);
  if (rank != 2 || ((uintptr_t)map & 63) != 0 || ((uintptr_t)address & 15) != 0 || strides[0] % 16 != 0)
    return CUDA_ERROR_INVALID_VALUE;
  char record[sizeof lastTensorMap];
  snprintf(record, sizeof record,
           "type=%d rank=%u address=%p dims=%llu,%llu strides=%llu box=%u,%u element_strides=%u,%u interleave=%d "
           "swizzle=%d l2=%d oob=%d",
           type, rank, address, (unsigned long long)dims[0], (unsigned long long)dims[1],
           (unsigned long long)strides[0], box[0], box[1], elementStrides[0], elementStrides[1], interleave, swizzle,
           l2, oob);
  memset(map, 0, 128);
  uint64_t a = (uintptr_t)address;
  memcpy(map, &a, sizeof a);
  pthread_mutex_lock(&mutex);
  memcpy(lastTensorMap, record, sizeof record);
  pthread_mutex_unlock(&mutex);
  return CUDA_SUCCESS;
}

int cuGetErrorString(int error, const char **text) {
  switch (error) {
  case CUDA_SUCCESS: *text = "no error"; break;
  case CUDA_ERROR_INVALID_VALUE: *text = "invalid argument"; break;
  case CUDA_ERROR_NO_DEVICE: *text = "no CUDA-capable device is detected"; break;
  case CUDA_ERROR_INVALID_IMAGE: *text = "device kernel image is invalid"; break;
  case CUDA_ERROR_INVALID_CONTEXT: *text = "invalid device context"; break;
  case CUDA_ERROR_INVALID_DEVICE: *text = "invalid device ordinal"; break;
  case CUDA_ERROR_NOT_FOUND: *text = "named symbol not found"; break;
  default: *text = NULL; return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
