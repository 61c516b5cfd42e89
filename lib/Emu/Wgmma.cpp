#include "Emu/Wgmma.h"

namespace tilec::emu {

MatrixDescriptor MatrixDescriptor::decode(uint64_t bits) {
  MatrixDescriptor d;
  d.start = (uint32_t)(bits & 0x3FFF) << 4;
  d.lbo = (uint32_t)((bits >> 16) & 0x3FFF) << 4;
  d.sbo = (uint32_t)((bits >> 32) & 0x3FFF) << 4;
  d.baseOffset = (int)((bits >> 49) & 7);
  static constexpr int kSwizzle[4] = {0, 128, 64, 32};
  d.swizzleBytes = kSwizzle[(bits >> 62) & 3];
  return d;
}

std::string MatrixDescriptor::unsupported() const {
  if (swizzleBytes == 0)
    return "the unswizzled (interleaved) layout is not modelled";
  if (baseOffset != 0)
    return "a nonzero base offset (bits 49-51) is not modelled";
  return "";
}

uint32_t wgmmaOperandAddress(const MatrixDescriptor &d, bool mnMajor, int mn, int k, int elemBytes) {
  const uint32_t s = (uint32_t)d.swizzleBytes;
  uint32_t a;
  if (mnMajor) {
    const uint32_t byte = (uint32_t)(mn * elemBytes);
    a = d.start + byte / s * d.lbo + byte % s + (uint32_t)(k / 8) * d.sbo + (uint32_t)(k % 8) * s;
  } else {
    a = d.start + (uint32_t)(mn / 8) * d.sbo + (uint32_t)(mn % 8) * s + (uint32_t)(k * elemBytes);
  }
  const uint32_t phases = s / 16 - 1;  // 7, 3 or 1: the chunk bits the row bits flip
  return a ^ (((a >> 7) & phases) << 4);
}

} // namespace tilec::emu
