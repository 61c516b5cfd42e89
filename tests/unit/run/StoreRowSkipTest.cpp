// Stores of an accumulator tile into a whole tensor skip the row test: rows
// past the tensor's end lie past num_records, where the hardware drops the
// access. That holds only while their 32-bit byte offsets do not wrap: a
// [1, 2^24] f32 tensor (64 MiB, rows of 2^26 bytes) under a 128-row tile puts
// row 64 at 2^32 bytes, which wraps to 0, onto row 0. The kernel stores
// O[r][c] = r; row 0 must read 0, and nothing else may change.
#include "Registry.h"

#include "tilec/dsl.hpp"
#include "tilec/runtime.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace tilec;
using namespace tilec::dsl;

namespace {

constexpr int64_t BM = 128, BN = 64, BK = 16;

Result<Kernel> buildRowIndexStore() {
  KernelBuilder kb("row_index_store", {.numWaves = 4});
  Tensor A = kb.tensor("A", DType::bf16, 2);  // [BM, BK]: A[r][0] = r, 0 elsewhere
  Tensor B = kb.tensor("B", DType::bf16, 2);  // [BK, BN]: B[0][c] = 1, 0 elsewhere
  Tensor O = kb.tensor("O", DType::f32, 2);   // [1, 2^24]
  kb.grid({GridExtent::fixed(1)});
  Tile a = kb.ldsTile("a", {BM, BK}, DType::bf16), b = kb.ldsTile("b", {BK, BN}, DType::bf16);
  Tile o = kb.regTile("o", {BM, BN}, DType::f32);
  kb.load(A, {Index(0), Index(0)}, a);
  kb.load(B, {Index(0), Index(0)}, b);
  kb.fill(o, 0.0);
  kb.gemm(a, b, o);  // o[r][c] = r
  kb.store(o, O, {Index(0), Index(0)});
  Kernel k = kb.finish();
  if (!k.ok())
    return Error{k.error()};
  return k;
}

uint16_t bf16Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);  // exact for the small integers used here
}

TEST(StoreRowSkip, RowsPastTheEndDoNotWrapOntoTheTensor) {
  Result<Kernel> kernel = buildRowIndexStore();
  ASSERT_TRUE(kernel.ok()) << kernel.error();
  const int64_t N = int64_t(1) << 24;
  for (const char *arch : {"gfx942", "gfx1151", "sm_90a"}) {
    SCOPED_TRACE(arch);
    Result<CompiledKernel> ck = compile(*kernel, {.arch = arch});
    ASSERT_TRUE(ck.ok()) << ck.error();
    Result<std::unique_ptr<Device>> dev = Device::open(DeviceKind::Emulator, arch);
    ASSERT_TRUE(dev.ok()) << dev.error();
    Result<void *> a = (*dev)->allocate(BM * BK * 2), b = (*dev)->allocate(BK * BN * 2),
                   o = (*dev)->allocate(N * 4);
    ASSERT_TRUE(a.ok() && b.ok() && o.ok());
    std::vector<uint16_t> ah(BM * BK, 0), bh(BK * BN, 0);
    std::vector<float> oh(N, -1.0f);
    for (int64_t r = 0; r < BM; ++r)
      ah[r * BK] = bf16Bits(float(r));
    for (int64_t c = 0; c < BN; ++c)
      bh[c] = bf16Bits(1.0f);
    ASSERT_TRUE((*dev)->copyToDevice(*a, ah.data(), ah.size() * 2).ok());
    ASSERT_TRUE((*dev)->copyToDevice(*b, bh.data(), bh.size() * 2).ok());
    ASSERT_TRUE((*dev)->copyToDevice(*o, oh.data(), oh.size() * 4).ok());
    Result<LaunchStats> s = (*dev)->launch(
        *ck, {LaunchArg::tensor(*a, {BM, BK}), LaunchArg::tensor(*b, {BK, BN}), LaunchArg::tensor(*o, {1, N})});
    ASSERT_TRUE(s.ok()) << s.error();
    ASSERT_TRUE((*dev)->copyToHost(oh.data(), *o, oh.size() * 4).ok());
    for (int64_t c = 0; c < BN; ++c)
      ASSERT_EQ(oh[c], 0.0f) << "O[0][" << c << "]: a row past the end wrapped onto row 0";
    int64_t changed = 0;
    for (int64_t i = BN; i < N; ++i)
      changed += oh[i] != -1.0f;
    EXPECT_EQ(changed, 0);
  }
}

} // namespace
