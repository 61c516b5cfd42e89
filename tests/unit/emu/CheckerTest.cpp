// The emulator's checkers, each proven by a kernel that plants the bug:
// global out-of-bounds, LDS races, uninitialized and misaligned LDS accesses,
// LDS bank conflicts (docs/hardware.md section 3 phase model), barrier deadlocks.
// Plus an emitted-style GEMM through the tile primitives on a ragged shape
// against a CPU reference.
#include "EmuTestUtil.h"

#include "Emu/Runtime.h"

#include <cmath>
#include <cstdlib>
#include <random>

using namespace tilec::emu;
using namespace tilec::emu::test;

namespace {

bool anyMessageHas(const LaunchReport &r, const std::string &needle) {
  for (const auto &m : r.messages)
    if (m.find(needle) != std::string::npos)
      return true;
  return false;
}

// --- global out-of-bounds --------------------------------------------------------------

TEST(OutOfBounds, AccessOutsideEveryAllocationIsReportedAndSurvived) {
  auto emu = makeEmulator("gfx942");
  auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void overrun(const float *in, float *out, int records) {
  int t = tl::hw::thread_id();
  // Bug: num_records claims more than the allocation holds.
  tl::hw::rsrc_t ri = tl::hw::make_rsrc(in, records, 0x00020000u);
  tl::hw::rsrc_t ro = tl::hw::make_rsrc(out, records, 0x00020000u);
  unsigned v = tl::hw::buffer_load_b32(ri, t * 4096);
  tl::hw::buffer_store_b32(v + 1, ro, t * 4096);
}
)", "overrun");
  ASSERT_TRUE(k);
  auto *in = (float *)emu->allocate(16 * 4), *out = (float *)emu->allocate(16 * 4);
  LaunchReport rep = launchOrFail(*emu, *k, {{2, 1, 1}, 64},
                                  {Arg::pointer(in), Arg::pointer(out), Arg::integer(1 << 30)});
  // Lane 0 is in bounds; lanes 1..63 of both workgroups load and store outside.
  EXPECT_EQ(rep.outOfBounds, 2 * 63 * 2);
  EXPECT_FALSE(rep.clean());
  ASSERT_TRUE(anyMessageHas(rep, "out-of-bounds: kernel overrun workgroup (")) << rep.messages.size();
  EXPECT_TRUE(anyMessageHas(rep, "outside every allocation"));
  EXPECT_TRUE(anyMessageHas(rep, " lane 1 (wave 0)"));
  EXPECT_EQ(((const uint32_t *)out)[0], 1u);  // lane 0's store happened (raw bits 0 + 1)
}

// b64/b128 buffer loads (what aligned tensors' tile loads issue): the bytes
// in range, zeros wholly past num_records, and an access that is misaligned
// or straddles num_records is reported (docs/hardware.md section 4: keep each
// access wholly in or wholly out).
TEST(OutOfBounds, VectorBufferLoadsAreWholeAlignedAndChecked) {
  auto emu = makeEmulator("gfx942");
  auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void wide(const unsigned *in, unsigned *out, int records, int skew) {
  int t = tl::hw::thread_id();
  tl::hw::rsrc_t r = tl::hw::make_rsrc(in, records, 0x00020000u);
  tl::uint4_t q = tl::hw::buffer_load_b128(r, 16 * t + skew);
  tl::uint2_t d = tl::hw::buffer_load_b64(r, 8 * t + skew);
  for (int i = 0; i < 4; ++i)
    out[6 * t + i] = q[i];
  out[6 * t + 4] = d[0];
  out[6 * t + 5] = d[1];
}
)", "wide");
  ASSERT_TRUE(k);
  auto *in = (unsigned *)emu->allocate(64 * 4 * 4), *out = (unsigned *)emu->allocate(64 * 6 * 4);
  for (unsigned i = 0; i < 64 * 4; ++i)
    in[i] = 1000 + i;
  // num_records = 40 dwords: lanes 0..9 of the b128 loads are in, 10.. wholly past.
  LaunchReport rep = launchOrFail(*emu, *k, {{1, 1, 1}, 64},
                                  {Arg::pointer(in), Arg::pointer(out), Arg::integer(40 * 4), Arg::integer(0)});
  EXPECT_TRUE(rep.clean()) << rep.summary();
  for (unsigned t = 0; t < 64; ++t) {
    for (unsigned i = 0; i < 4; ++i)
      EXPECT_EQ(out[6 * t + i], t < 10 ? 1000 + 4 * t + i : 0u) << t;
    EXPECT_EQ(out[6 * t + 4], t < 20 ? 1000 + 2 * t : 0u) << t;
    EXPECT_EQ(out[6 * t + 5], t < 20 ? 1000 + 2 * t + 1 : 0u) << t;
  }
  // Skewed by 4 bytes: every load in range is misaligned; the b128 load of
  // lane 9 (bytes 148..163) would also straddle num_records (160).
  LaunchReport bad = launchOrFail(*emu, *k, {{1, 1, 1}, 64},
                                  {Arg::pointer(in), Arg::pointer(out), Arg::integer(40 * 4), Arg::integer(4)});
  EXPECT_FALSE(bad.clean());
  EXPECT_EQ(bad.invalidInstructions, 10 + 20);  // lanes 0..9 (b128) and 0..19 (b64)
  EXPECT_TRUE(anyMessageHas(bad, "is not aligned to its size")) << bad.summary();
}

// b64/b128 buffer stores (what blocked tiles' runs issue): the bytes in
// range written, those wholly past num_records dropped, a misaligned store
// reported and not performed.
TEST(OutOfBounds, VectorBufferStoresAreWholeAlignedAndChecked) {
  auto emu = makeEmulator("gfx942");
  auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void wide(unsigned *out, int records, int skew) {
  unsigned t = (unsigned)tl::hw::thread_id();
  tl::hw::rsrc_t r = tl::hw::make_rsrc(out, records, 0x00020000u);
  tl::uint4_t q = {4 * t, 4 * t + 1, 4 * t + 2, 4 * t + 3};
  tl::uint2_t d = {7000 + 2 * t, 7000 + 2 * t + 1};
  tl::hw::buffer_store_b128(q, r, 16 * (int)t + skew);
  tl::hw::buffer_store_b64(d, r, 1024 + 8 * (int)t + skew);
}
)", "wide");
  ASSERT_TRUE(k);
  auto *out = (unsigned *)emu->allocate(512 * 4);
  auto run = [&](int records, int skew) {
    for (unsigned i = 0; i < 512; ++i)
      out[i] = 0xdeadu;
    return launchOrFail(*emu, *k, {{1, 1, 1}, 64}, {Arg::pointer(out), Arg::integer(records), Arg::integer(skew)});
  };
  // num_records = 1024 + 80 bytes: every b128 store (bytes 0..1023) and the
  // b64 stores of lanes 0..9 are in, lanes 10.. of the b64 stores wholly past.
  LaunchReport rep = run(1024 + 80, 0);
  EXPECT_TRUE(rep.clean()) << rep.summary();
  for (unsigned t = 0; t < 64; ++t)
    for (unsigned i = 0; i < 4; ++i)
      EXPECT_EQ(out[4 * t + i], 4 * t + i) << t;
  for (unsigned t = 0; t < 64; ++t) {
    EXPECT_EQ(out[256 + 2 * t], t < 10 ? 7000 + 2 * t : 0xdeadu) << t;
    EXPECT_EQ(out[256 + 2 * t + 1], t < 10 ? 7000 + 2 * t + 1 : 0xdeadu) << t;
  }
  // Skewed by 4 bytes: every store in range is misaligned, reported, dropped.
  LaunchReport bad = run(2048, 4);
  EXPECT_FALSE(bad.clean());
  EXPECT_EQ(bad.invalidInstructions, 64 + 64);
  EXPECT_TRUE(anyMessageHas(bad, "buffer store of 16 bytes")) << bad.summary();
  EXPECT_TRUE(anyMessageHas(bad, "is not aligned to its size")) << bad.summary();
  EXPECT_EQ(out[1], 0xdeadu);
}

TEST(OutOfBounds, PointerNotFromAllocateIsReported) {
  auto emu = makeEmulator("gfx942");
  auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void rd(const int *in, int *out) {
  tl::Global<int, 0x00020000u> g(in, 1, 64), o(out, 1, 64);
  int t = tl::hw::thread_id();
  o.store(0, t, g.load(0, t));
}
)", "rd");
  ASSERT_TRUE(k);
  std::vector<int> foreign(64, 7);
  auto *out = (int *)emu->allocate(64 * 4);
  LaunchReport rep = launchOrFail(*emu, *k, {{1, 1, 1}, 64}, {Arg::pointer(foreign.data()), Arg::pointer(out)});
  EXPECT_EQ(rep.outOfBounds, 64);
  for (int t = 0; t < 64; ++t)
    EXPECT_EQ(out[t], 0);  // the rejected load returned 0
}

// --- LDS races -------------------------------------------------------------------------

const char *kRaceKernel = R"(#include "tilec_prelude.h"
extern "C" __global__ void exchange(int *out, int withBarrier) {
  __shared__ int buf[128];
  int t = tl::hw::thread_id();
  tl::hw::lds_write(buf + t, t);
  if (withBarrier) tl::hw::barrier();
  out[t] = tl::hw::lds_read(buf + (t + 64) % 128);  // the other wave's slot
}
)";

TEST(Race, MissingBarrierBetweenWavesIsReported) {
  auto emu = makeEmulator("gfx942");
  auto k = loadOrFail(*emu, kRaceKernel, "exchange");
  ASSERT_TRUE(k);
  auto *out = (int *)emu->allocate(128 * 4);
  LaunchReport racy = launchOrFail(*emu, *k, {{1, 1, 1}, 128}, {Arg::pointer(out), Arg::integer(0)});
  EXPECT_GT(racy.races, 0);
  EXPECT_TRUE(anyMessageHas(racy, "LDS race: kernel exchange workgroup (0,0,0) lane"));
  LaunchReport fixed = launchOrFail(*emu, *k, {{1, 1, 1}, 128}, {Arg::pointer(out), Arg::integer(1)});
  EXPECT_EQ(fixed.races, 0);
  EXPECT_TRUE(fixed.clean()) << fixed.summary();
  for (int t = 0; t < 128; ++t)
    EXPECT_EQ(out[t], (t + 64) % 128);
}

TEST(Race, ReadReadIsNotARaceButWriteAfterReadIs) {
  auto emu = makeEmulator("gfx942");
  auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void war(int *out, int overwrite) {
  __shared__ int buf[4];
  int t = tl::hw::thread_id();
  if (t == 0) tl::hw::lds_write(buf, 5);
  tl::hw::barrier();
  out[t] = tl::hw::lds_read(buf);          // every wave reads: fine
  if (overwrite && t == 64) tl::hw::lds_write(buf, 6);  // wave 1 writes while wave 0 read: race
}
)", "war");
  ASSERT_TRUE(k);
  auto *out = (int *)emu->allocate(128 * 4);
  EXPECT_EQ(launchOrFail(*emu, *k, {{1, 1, 1}, 128}, {Arg::pointer(out), Arg::integer(0)}).races, 0);
  EXPECT_EQ(launchOrFail(*emu, *k, {{1, 1, 1}, 128}, {Arg::pointer(out), Arg::integer(1)}).races, 1);
}

// --- uninitialized LDS reads ------------------------------------------------------------

// LDS is not cleared at launch: it starts as poison (NaN as f32) in every
// workgroup, and a read of a byte no lane of the workgroup wrote is reported.
// Workgroup 0 writes all 128 slots; the others write the first `filled` only,
// after workgroup 0 may have run on the same host thread: written-ness and
// contents start afresh in each workgroup.
TEST(UninitializedLds, ReadOfUnwrittenBytesIsReportedAndReadsPoison) {
  auto emu = makeEmulator("gfx942");
  auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void partial_fill(float *out, int filled) {
  __shared__ float buf[128];
  int t = tl::hw::thread_id(), g = tl::hw::block_id(0);
  if (g == 0 || t < filled) tl::hw::lds_write(buf + t, 1.0f + g);
  tl::hw::barrier();
  out[128 * g + t] = tl::hw::lds_read(buf + t);
}
)", "partial_fill");
  ASSERT_TRUE(k);
  const int groups = 8;
  auto *out = (float *)emu->allocate(groups * 128 * 4);
  LaunchReport full = launchOrFail(*emu, *k, {{groups, 1, 1}, 128}, {Arg::pointer(out), Arg::integer(128)});
  EXPECT_EQ(full.uninitializedLdsReads, 0);
  EXPECT_TRUE(full.clean()) << full.summary();
  LaunchReport part = launchOrFail(*emu, *k, {{groups, 1, 1}, 128}, {Arg::pointer(out), Arg::integer(100)});
  EXPECT_EQ(part.uninitializedLdsReads, (groups - 1) * 28);
  EXPECT_FALSE(part.clean());
  EXPECT_NE(part.summary().find("uninitialized_lds=196"), std::string::npos) << part.summary();
  EXPECT_TRUE(anyMessageHas(part, "uninitialized LDS read: kernel partial_fill workgroup (")) << part.summary();
  EXPECT_TRUE(anyMessageHas(part, "which no lane of the workgroup has written"));
  for (int g = 0; g < groups; ++g)
    for (int t = 0; t < 128; ++t) {
      if (g == 0 || t < 100)
        EXPECT_EQ(out[128 * g + t], 1.0f + g) << g << " " << t;
      else
        EXPECT_TRUE(std::isnan(out[128 * g + t])) << g << " " << t << ": " << out[128 * g + t];
    }
}

// Written-ness is per byte: a 4-byte read over 2 written bytes is reported.
TEST(UninitializedLds, PartlyWrittenWordIsReported) {
  auto emu = makeEmulator("gfx942");
  auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void half_word(unsigned *out, int both) {
  __shared__ unsigned short buf[128];
  int t = tl::hw::thread_id();
  tl::hw::lds_write(buf + 2 * t, (unsigned short)t);
  if (both) tl::hw::lds_write(buf + 2 * t + 1, (unsigned short)0);
  out[t] = tl::hw::lds_read((const unsigned *)(buf + 2 * t));
}
)", "half_word");
  ASSERT_TRUE(k);
  auto *out = (unsigned *)emu->allocate(64 * 4);
  LaunchReport both = launchOrFail(*emu, *k, {{1, 1, 1}, 64}, {Arg::pointer(out), Arg::integer(1)});
  EXPECT_TRUE(both.clean()) << both.summary();
  EXPECT_EQ(out[5], 5u);
  LaunchReport half = launchOrFail(*emu, *k, {{1, 1, 1}, 64}, {Arg::pointer(out), Arg::integer(0)});
  EXPECT_EQ(half.uninitializedLdsReads, 64);
  EXPECT_EQ(out[5], 0xFFFF0005u);  // the unwritten high half is poison
}

// --- misaligned LDS accesses -------------------------------------------------------------

// b64/b128 (and b32) LDS accesses need an address that is a multiple of their
// size. Skewed by 8 bytes, the b128 writes are misaligned and the b64 reads
// are not; skewed by 4, both are. The accesses are still performed.
TEST(MisalignedLds, VectorAccessesNotAlignedToTheirSizeAreReported) {
  auto emu = makeEmulator("gfx942");
  auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void skewed(unsigned *out, int skew) {
  __shared__ __attribute__((aligned(16))) unsigned char buf[64 * 16 + 16];
  int t = tl::hw::thread_id();
  tl::uint4_t v = {4u * t, 4u * t + 1, 4u * t + 2, 4u * t + 3};
  tl::hw::lds_write((tl::uint4_t *)(buf + 16 * t + skew), v);
  tl::uint2_t d = tl::hw::lds_read((const tl::uint2_t *)(buf + 16 * t + skew));
  out[t] = d[1];
}
)", "skewed");
  ASSERT_TRUE(k);
  auto *out = (unsigned *)emu->allocate(64 * 4);
  auto run = [&](int skew) { return launchOrFail(*emu, *k, {{1, 1, 1}, 64}, {Arg::pointer(out), Arg::integer(skew)}); };
  LaunchReport aligned = run(0);
  EXPECT_EQ(aligned.misalignedLdsAccesses, 0);
  EXPECT_TRUE(aligned.clean()) << aligned.summary();
  LaunchReport by8 = run(8);
  EXPECT_EQ(by8.misalignedLdsAccesses, 64);
  EXPECT_FALSE(by8.clean());
  EXPECT_TRUE(anyMessageHas(by8, "misaligned LDS access: kernel skewed workgroup (0,0,0) lane ")) << by8.summary();
  EXPECT_TRUE(anyMessageHas(by8, "write of 16 bytes at LDS offset ")) << by8.messages[0];
  EXPECT_TRUE(anyMessageHas(by8, "is not aligned to its size"));
  EXPECT_EQ(out[3], 13u);  // performed: lane 3's second dword
  EXPECT_EQ(run(4).misalignedLdsAccesses, 128);
}

// --- bank conflicts (section 3) ---------------------------------------------------------

const char *kBankKernel = R"(#include "tilec_prelude.h"
extern "C" __global__ void banks(int strideDwords) {
  __shared__ float buf[64 * 32];
  int l = tl::hw::thread_id();
  tl::hw::lds_write(buf + l * strideDwords, 1.0f);
}
)";

TEST(BankConflicts, Gfx942B32PhaseModelCountsExactly) {
  auto emu = makeEmulator("gfx942");
  auto k = loadOrFail(*emu, kBankKernel, "banks");
  ASSERT_TRUE(k);
  auto run = [&](int stride) {
    return launchOrFail(*emu, *k, {{1, 1, 1}, 64}, {Arg::integer(stride)});
  };
  // Consecutive dwords: each 32-lane phase hits 32 distinct banks.
  LaunchReport r1 = run(1);
  EXPECT_EQ(r1.bankConflictCycles, 0);
  EXPECT_EQ(r1.ldsInstructions, 1);
  // Stride 2 dwords: a phase hits 16 banks twice -> 1 extra cycle per phase, 2 phases.
  EXPECT_EQ(run(2).bankConflictCycles, 2);
  // Stride 32 dwords (128 B): every lane of a phase on bank 0 -> 31 extra per phase.
  EXPECT_EQ(run(32).bankConflictCycles, 62);
  // Stride 0: one address, broadcast.
  EXPECT_EQ(run(0).bankConflictCycles, 0);
}

TEST(BankConflicts, Gfx1151Wave32OnePhaseOf32) {
  auto emu = makeEmulator("gfx1151");
  auto k = loadOrFail(*emu, kBankKernel, "banks");
  ASSERT_TRUE(k);
  LaunchReport r = launchOrFail(*emu, *k, {{1, 1, 1}, 64}, {Arg::integer(2)});  // 2 waves of 32
  EXPECT_EQ(r.ldsInstructions, 2);
  EXPECT_EQ(r.bankConflictCycles, 2);  // 1 extra per wave instruction
}

// The k-th accesses of a wave's lanes are one instruction: two accesses per lane.
TEST(BankConflicts, GroupsTheKthAccessOfEachLane) {
  auto emu = makeEmulator("gfx942");
  auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void two(int *out) {
  __shared__ int buf[64 * 32];
  int l = tl::hw::thread_id();
  tl::hw::lds_write(buf + l, l);            // conflict-free
  out[l] = tl::hw::lds_read(buf + 32 * l);  // 62 extra cycles
}
)", "two");
  ASSERT_TRUE(k);
  auto *out = (int *)emu->allocate(64 * 4);
  LaunchReport r = launchOrFail(*emu, *k, {{1, 1, 1}, 64}, {Arg::pointer(out)});
  EXPECT_EQ(r.ldsInstructions, 2);
  EXPECT_EQ(r.bankConflictCycles, 62);
}

// Phase grouping of wider accesses (section 3 table), checked on the model directly.
TEST(BankConflicts, WideAccessPhases) {
  using tilec::emu::detail::bankConflictCycles;
  std::vector<uint32_t> off(64);
  std::vector<int> b64(64, 8), b128(64, 16);
  for (int l = 0; l < 64; ++l)
    off[l] = 8 * l;  // b64 contiguous: 16 lanes x 2 dwords = 32 banks per phase
  EXPECT_EQ(bankConflictCycles(off, b64, 64, 32), 0);
  for (int l = 0; l < 64; ++l)
    off[l] = 16 * l;  // b128 contiguous: the 8-lane groups {0-3,20-23}... are conflict-free too
  EXPECT_EQ(bankConflictCycles(off, b128, 64, 32), 0);
  // b128, lanes 0-3 and 20-23 (one gfx942 phase) on the same 16 bytes mod 128:
  // lane l at 128*l -> every lane of a phase on banks 0-3 -> 8 distinct dwords per bank.
  for (int l = 0; l < 64; ++l)
    off[l] = 128 * l;
  EXPECT_EQ(bankConflictCycles(off, b128, 64, 32), 8 * 7);
  // Equal addresses broadcast: runs of 4 lanes on the same 16 bytes.
  for (int l = 0; l < 64; ++l)
    off[l] = 16 * (l % 4);
  EXPECT_EQ(bankConflictCycles(off, b128, 64, 32), 0);
  // Lanes 0-15 (of each 32) on banks 0-15, lanes 16-31 on banks 16-31, every
  // run of 4 lanes in its own row. The listed groups pair {0-3,20-23},
  // {4-7,16-19}, ... = one low and one high half: conflict-free. A contiguous
  // 8-lane grouping ({0-7}: two rows on banks 0-15) would count 8.
  for (int l = 0; l < 64; ++l)
    off[l] = 16 * (l % 4) + 64 * ((l % 32) >= 16) + 128 * (l / 4);
  EXPECT_EQ(bankConflictCycles(off, b128, 64, 32), 0);
  // Same halves swapped for lanes 20-23 only: phase {0-3,20-23} now has two
  // rows on banks 0-15 -> 1 extra cycle (and phase {32-35,52-55} likewise).
  for (int l = 0; l < 64; ++l)
    off[l] = 16 * (l % 4) + 64 * ((l % 32) >= 16 && (l % 32) / 4 != 5) + 128 * (l / 4);
  EXPECT_EQ(bankConflictCycles(off, b128, 64, 32), 2);
  // Unaligned b128, the most dwords a lane touches (5): lane l at 16*l + 2.
  // Each phase's two runs of 4 lanes cover 17 consecutive dwords each and
  // meet on 2 banks ({0-3,20-23}: banks 0..16 and 16..31,0) -> 1 extra cycle
  // in each of the 8 phases.
  for (int l = 0; l < 64; ++l)
    off[l] = 16 * l + 2;
  EXPECT_EQ(bankConflictCycles(off, b128, 64, 32), 8);
  // wave32 (gfx11): b32 is one phase of 32 lanes.
  std::vector<uint32_t> off32(32);
  std::vector<int> b32(32, 4);
  for (int l = 0; l < 32; ++l)
    off32[l] = 4 * 32 * l;
  EXPECT_EQ(bankConflictCycles(off32, b32, 32, 32), 31);
}

// --- deadlock --------------------------------------------------------------------------

TEST(Deadlock, WaveReturningBeforeABarrierIsReportedNotHung) {
  auto emu = makeEmulator("gfx942");
  auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void early(int *out) {
  int t = tl::hw::thread_id();
  if (t >= 64) return;  // bug: wave 1 never reaches the barrier
  tl::hw::barrier();
  out[t] = 1;
}
)", "early");
  ASSERT_TRUE(k);
  auto *out = (int *)emu->allocate(128 * 4);
  LaunchReport r = launchOrFail(*emu, *k, {{3, 1, 1}, 128}, {Arg::pointer(out)});
  EXPECT_TRUE(r.deadlock);
  EXPECT_TRUE(anyMessageHas(r, "deadlock: kernel early workgroup (")) << (r.messages.empty() ? "" : r.messages[0]);
  EXPECT_TRUE(anyMessageHas(r, "waves {0} wait at barrier 1 but waves {1} have returned"));
}

TEST(Deadlock, LanesOfOneWaveMayReturnBeforeABarrier) {
  auto emu = makeEmulator("gfx942");
  auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void partial(int *out) {
  int t = tl::hw::thread_id();
  if (t % 64 >= 32) return;  // s_barrier is a wave-level instruction: fine
  tl::hw::barrier();
  out[t] = 1;
}
)", "partial");
  ASSERT_TRUE(k);
  auto *out = (int *)emu->allocate(128 * 4);
  LaunchReport r = launchOrFail(*emu, *k, {{1, 1, 1}, 128}, {Arg::pointer(out)});
  EXPECT_FALSE(r.deadlock);
  EXPECT_EQ(out[0] + out[64] + out[32], 2);
}

// --- a GEMM through the tile primitives (the emitter's structure) -------------------------

/// The emitted GEMM's structure (lib/Emit): 128x128x32 tiles, 4 waves, bf16 in,
/// f32 out, ragged edges through the buffer bounds check.
const char *kGemm = R"(#include "tilec_prelude.h"
extern "C" __global__ TL_LAUNCH_BOUNDS(256) void gemm_bf16_f32(const tl::bf16 *A, int A_d0, int A_d1,
    const tl::bf16 *B, int B_d0, int B_d1, float *C, int C_d0, int C_d1) {
  __shared__ __attribute__((aligned(16))) unsigned char tl_lds[2 * 128 * 40 * 2];
  const tl::Global<tl::bf16, 0x00020000u> A_g(A, A_d0, A_d1);
  const tl::Global<tl::bf16, 0x00020000u> B_g(B, B_d0, B_d1);
  const tl::Global<float, 0x00020000u> C_g(C, C_d0, C_d1);
  const tl::Lds<tl::bf16, 128, 32, 40> t_a{(tl::bf16 *)(tl_lds + 0)};
  const tl::Lds<tl::bf16, 128, 32, 40> t_b{(tl::bf16 *)(tl_lds + 128 * 40 * 2)};  // B^T tile: N x K
  tl::Acc<tl::Mfma32x32x8<tl::bf16>, 128, 128, 2, 2> acc;
  tl::fill(acc, 0.0f);
  const int r0 = tl::block_id(0) * 128, c0 = tl::block_id(1) * 128;
  for (int k = 0; k < A_d1; k += 32) {
    tl::barrier();
    tl::load_tile<256>(t_a, A_g, r0, k);
    tl::load_tile<256>(t_b, B_g, c0, k);
    tl::barrier();
    tl::gemm<tl::Mfma32x32x8<tl::bf16>, true>(acc, t_a, t_b);
  }
  tl::store_tile(acc, C_g, r0, c0);
}
)";

float bf16Round(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  u &= 0xffff0000u;
  memcpy(&x, &u, 4);
  return x;
}

TEST(Gemm, RaggedBf16GemmMatchesReference) {
  const int M = 100, N = 70, K = 33;
  auto emu = makeEmulator("gfx942");
  auto k = loadOrFail(*emu, kGemm, "gemm_bf16_f32");
  ASSERT_TRUE(k);
  auto *A = (uint16_t *)emu->allocate(M * K * 2), *Bt = (uint16_t *)emu->allocate(N * K * 2);
  auto *C = (float *)emu->allocate(M * N * 4);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(M * K), b(N * K);
  for (int i = 0; i < M * K; ++i) {
    a[i] = bf16Round(dist(rng));
    uint32_t u;
    memcpy(&u, &a[i], 4);
    A[i] = (uint16_t)(u >> 16);
  }
  for (int i = 0; i < N * K; ++i) {
    b[i] = bf16Round(dist(rng));
    uint32_t u;
    memcpy(&u, &b[i], 4);
    Bt[i] = (uint16_t)(u >> 16);
  }
  LaunchReport r = launchOrFail(*emu, *k, {{1, 1, 1}, 256},
                                {Arg::pointer(A), Arg::integer(M), Arg::integer(K), Arg::pointer(Bt), Arg::integer(N),
                                 Arg::integer(K), Arg::pointer(C), Arg::integer(M), Arg::integer(N)});
  EXPECT_TRUE(r.clean()) << r.summary() << (r.messages.empty() ? "" : "\n" + r.messages[0]);
  // Inputs are exact bf16, products exact; only f32 accumulation rounds:
  // |err| <= K * 2^-24 * sum|a||b| <= K * 2^-24 * K * max|a| max|b|. A bf16
  // output would add 2^-8 relative; f32 output here, so the bound is tight.
  double tol = (double)K * K * std::ldexp(1.0, -24) * 1.0 * 1.0 + 1e-7;
  double maxErr = 0;
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double ref = 0;
      for (int kk = 0; kk < K; ++kk)
        ref += (double)a[m * K + kk] * b[n * K + kk];
      maxErr = std::max(maxErr, std::fabs(ref - C[m * N + n]));
    }
  EXPECT_LE(maxErr, tol);
}

} // namespace
