// The control side of the stub HIP runtime (StubHip.cpp), which the tests load
// as libamdhip64.so in place of ROCm's: the GPUs it reports, the time its
// events measure, and the calls it received. Tests look these functions up
// with dlsym on the library tilec::Device loaded.
#pragma once

extern "C" {
/// The GPUs the stub reports, as their gcnArchNames separated by commas
/// ("gfx90a:sramecc+:xnack-,gfx942:sramecc+:xnack-": device 0 and device 1).
void tilecStubHipSetDevices(const char *gcnArchNames);
/// The byte sizes of the launched kernels' parameters, comma-separated
/// ("8,4,4": a pointer and two ints): launches then record their values.
void tilecStubHipSetParamBytes(const char *sizes);
/// What hipEventElapsedTime reports between two completed events.
void tilecStubHipSetEventMilliseconds(float ms);
/// The HIP calls received so far, one line each, in order; see StubHip.cpp
/// for the format. Valid until the next call into the stub.
const char *tilecStubHipTrace();
}
