// The emulator's model of asynchronous global->LDS copies (cp.async on
// sm_90a; tilec_hw_emu.h, Emulator.h): a copy's LDS write happens when
// async_wait retires its group, and an LDS access to bytes a copy still
// writes is reported as a race. Each test runs a hand-written kernel whose
// LDS contents and race count follow from that model.
#include "EmuTestUtil.h"

#include <cmath>
#include <cstdint>

using namespace tilec::emu;
using namespace tilec::emu::test;

namespace {

/// What a read of never-written LDS returns: the emulator fills LDS with poison
/// bytes 0xFF at each workgroup's start (the hardware leaves old data there).
constexpr unsigned kPoisonWord = 0xFFFFFFFFu;

constexpr const char *kArch = "sm_90a";  // wave32: 64 lanes are two waves
constexpr const char *kInFlight =
    "LDS read of bytes an asynchronous copy has not completed (cp.async not yet waited for)";

bool anyMessageHas(const LaunchReport &r, const std::string &needle) {
  for (const auto &m : r.messages)
    if (m.find(needle) != std::string::npos)
      return true;
  return false;
}

// Lane t copies 16 bytes (words 4t..4t+3) to LDS; after the wait (if any) and
// a barrier, lane t reads the 16 bytes lane 63 - t copied, a lane of the
// other wave. The buffer holds `records` bytes: copies not wholly below it
// write zeros.
const char *kCopyKernel = R"(#include "tilec_prelude.h"
extern "C" __global__ void copy16(const unsigned *in, unsigned *out, int records, int wait) {
  TL_LDS(buf, 64 * 16);
  const int t = tl::hw::thread_id();
  tl::hw::copy_async<16>(buf + 16 * t, tl::hw::make_rsrc(in, records, 0u), 16 * t);
  tl::hw::async_commit();
  if (wait)
    tl::hw::async_wait<0>();
  tl::hw::barrier();
  const tl::uint4_t v = tl::hw::lds_read((const tl::uint4_t *)(buf + 16 * (63 - t)));
  for (int i = 0; i < 4; ++i)
    out[4 * t + i] = v[i];
}
)";

TEST(AsyncCopy, WaitedCopyIsVisibleAfterTheBarrier) {
  auto emu = makeEmulator(kArch);
  auto k = loadOrFail(*emu, kCopyKernel, "copy16");
  ASSERT_TRUE(k);
  auto *in = (unsigned *)emu->allocate(64 * 16), *out = (unsigned *)emu->allocate(64 * 16);
  for (unsigned i = 0; i < 64 * 4; ++i)
    in[i] = 1000 + i;
  const int records = 60 * 16;  // the copies of lanes 60..63 lie past num_records
  LaunchReport rep = launchOrFail(*emu, *k, {{1, 1, 1}, 64},
                                  {Arg::pointer(in), Arg::pointer(out), Arg::integer(records), Arg::integer(1)});
  EXPECT_TRUE(rep.clean()) << rep.summary();
  EXPECT_EQ(rep.races, 0);
  for (unsigned t = 0; t < 64; ++t) {
    const unsigned src = 63 - t;
    for (unsigned i = 0; i < 4; ++i)
      EXPECT_EQ(out[4 * t + i], src < 60 ? in[4 * src + i] : 0u) << "lane " << t << " word " << i;
  }
}

TEST(AsyncCopy, ReadWithoutWaitIsARaceAndSeesStaleData) {
  auto emu = makeEmulator(kArch);
  auto k = loadOrFail(*emu, kCopyKernel, "copy16");
  ASSERT_TRUE(k);
  auto *in = (unsigned *)emu->allocate(64 * 16), *out = (unsigned *)emu->allocate(64 * 16);
  for (unsigned i = 0; i < 64 * 4; ++i)
    in[i] = 1000 + i;
  LaunchReport rep = launchOrFail(*emu, *k, {{1, 1, 1}, 64},
                                  {Arg::pointer(in), Arg::pointer(out), Arg::integer(64 * 16), Arg::integer(0)});
  EXPECT_FALSE(rep.clean());
  // Wave 0 runs first after the barrier: each of its 32 lanes reads bytes a
  // lane of wave 1 has copied but not waited for.
  EXPECT_GE(rep.races, 32);
  EXPECT_TRUE(anyMessageHas(rep, kInFlight)) << rep.summary();
  EXPECT_TRUE(anyMessageHas(rep, "which a copy issued by lane 63 still writes")) << rep.summary();
  for (unsigned t = 0; t < 32; ++t)
    for (unsigned i = 0; i < 4; ++i)
      EXPECT_EQ(out[4 * t + i], kPoisonWord) << "lane " << t << " read the copy before it completed";  // LDS starts as poison
}

// One wave; group 1 fills `first`, group 2 fills `second`. async_wait<1>
// retires exactly group 1; async_wait<0> then retires group 2.
TEST(AsyncCopy, WaitRetiresTheOldestGroupsFirst) {
  auto emu = makeEmulator(kArch);
  auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void groups(const unsigned *in, unsigned *out, int peek) {
  TL_LDS(first, 32 * 16);
  TL_LDS(second, 32 * 16);
  const int t = tl::hw::thread_id();
  const tl::hw::rsrc_t r = tl::hw::make_rsrc(in, 64 * 16, 0u);
  tl::hw::copy_async<16>(first + 16 * t, r, 16 * t);
  tl::hw::async_commit();
  tl::hw::copy_async<16>(second + 16 * t, r, 32 * 16 + 16 * t);
  tl::hw::async_commit();
  tl::hw::async_wait<1>();
  out[t] = tl::hw::lds_read((const unsigned *)(first + 16 * t));
  if (peek)
    out[32 + t] = tl::hw::lds_read((const unsigned *)(second + 16 * t));
  tl::hw::async_wait<0>();
  out[64 + t] = tl::hw::lds_read((const unsigned *)(second + 16 * t));
}
)", "groups");
  ASSERT_TRUE(k);
  auto *in = (unsigned *)emu->allocate(64 * 16), *out = (unsigned *)emu->allocate(96 * 4);
  for (unsigned i = 0; i < 64 * 4; ++i)
    in[i] = 1000 + i;
  for (int peek : {0, 1}) {
    SCOPED_TRACE(peek ? "reading the second group before it is waited for" : "reading each group after its wait");
    for (unsigned i = 0; i < 96; ++i)
      out[i] = 7;
    LaunchReport rep = launchOrFail(*emu, *k, {{1, 1, 1}, 32},
                                    {Arg::pointer(in), Arg::pointer(out), Arg::integer(peek)});
    // One lane's read of its in-flight copy is one race; nothing else races (one wave).
    EXPECT_EQ(rep.races, peek ? 32 : 0) << rep.summary();
    EXPECT_EQ(anyMessageHas(rep, kInFlight), peek == 1) << rep.summary();
    for (unsigned t = 0; t < 32; ++t) {
      EXPECT_EQ(out[t], in[4 * t]) << "lane " << t << ": group 1 complete after async_wait<1>";
      EXPECT_EQ(out[32 + t], peek ? kPoisonWord : 7u) << "lane " << t << ": group 2 still in flight after async_wait<1>";
      EXPECT_EQ(out[64 + t], in[4 * (32 + t)]) << "lane " << t << ": group 2 complete after async_wait<0>";
    }
  }
}

// The tile-level pipeline prologue: two stages of an A and a B tile, one
// group per tile. async_wait<2> leaves the two newest groups in flight, so
// stage 0 is complete only when the prologue issues it first (A0, B0, A1,
// B1). Issued tile by tile (A0, A1, B0, B1), B0 is still in flight.
TEST(AsyncCopy, PrologueIssuedOutOfStageOrderReadsATileInFlight) {
  auto emu = makeEmulator(kArch);
  auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void prologue(const float *in, float *out, int stageOrder) {
  TL_LDS(lds, 4 * 8 * 32 * 4);
  const tl::Global<float, 0u> g(in, 32, 32);
  using Tile = tl::Lds<float, 8, 32, 32, 4, 1, 1, 4, 4>;  // 16-byte copies, one per lane
  const Tile a0{(float *)lds}, b0{(float *)(lds + 1024)}, a1{(float *)(lds + 2048)}, b1{(float *)(lds + 3072)};
  tl::load_tile_async<64, 4>(a0, g, 0, 0);
  if (stageOrder) {
    tl::load_tile_async<64, 4>(b0, g, 8, 0);
    tl::load_tile_async<64, 4>(a1, g, 16, 0);
  } else {
    tl::load_tile_async<64, 4>(a1, g, 16, 0);
    tl::load_tile_async<64, 4>(b0, g, 8, 0);
  }
  tl::load_tile_async<64, 4>(b1, g, 24, 0);
  tl::async_wait<2>();
  tl::barrier();
  for (int i = tl::hw::thread_id(); i < 256; i += 64) {
    out[i] = a0.load(i / 32, i % 32);
    out[256 + i] = b0.load(i / 32, i % 32);
  }
  tl::async_wait<0>();
}
)", "prologue");
  ASSERT_TRUE(k);
  auto *in = (float *)emu->allocate(32 * 32 * 4), *out = (float *)emu->allocate(512 * 4);
  for (int i = 0; i < 32 * 32; ++i)
    in[i] = (float)(1 + i);
  LaunchReport good = launchOrFail(*emu, *k, {{1, 1, 1}, 64}, {Arg::pointer(in), Arg::pointer(out), Arg::integer(1)});
  EXPECT_TRUE(good.clean()) << good.summary();
  for (int i = 0; i < 512; ++i)
    EXPECT_EQ(out[i], in[i]) << i;  // rows 0..7 (A0), then rows 8..15 (B0)

  LaunchReport bad = launchOrFail(*emu, *k, {{1, 1, 1}, 64}, {Arg::pointer(in), Arg::pointer(out), Arg::integer(0)});
  EXPECT_GT(bad.races, 0);
  EXPECT_TRUE(anyMessageHas(bad, kInFlight)) << bad.summary();
  for (int i = 0; i < 256; ++i) {
    EXPECT_EQ(out[i], in[i]) << i;  // A0 was issued first either way
    if (i % 64 < 32)                // read by wave 0, which runs first after the barrier
      EXPECT_TRUE(std::isnan(out[256 + i])) << "B0 element " << i << " read before its copy completed (LDS poison is NaN)";
  }
}

} // namespace
