// The cost model on small hand-written loops whose cost is worked out by
// hand below, with the facts of docs/hardware.md section 11: gfx942 issues an
// instruction of a wave every 4 cycles, a global load takes 500 cycles, an
// LDS access 64 cycles plus its phases; sm_90a issues every cycle, 600
// cycles to global memory, 30 to shared memory.
#include "Model/AsmModel.h"

#include <gtest/gtest.h>

using namespace tilec;
using namespace tilec::model;

namespace {

const TargetInfo &target(const char *arch) { return *lookupTarget(arch); }
const DeviceFacts &device(const char *arch) { return *deviceFacts(arch); }

// gfx942, disassembly as lib/JIT prints it. The loop (0x4..0x24) loads 16
// bytes per lane, reads 16 bytes per lane from LDS, waits for the LDS read,
// runs one 32x32x8 MFMA (32 cycles), waits for the load and branches back:
// s_cbranch_scc1 at 0x24 with simm16 0xfff7 = -9 goes to 0x24 + 4 - 36 = 0x4.
std::string amdLoop(const char *vmWait) {
  return std::string("\n0000000000000000 <k>:\n"
                     "\ts_mov_b32 s0, 0                // 000000000000: BE800080\n"
                     "\tbuffer_load_dwordx4 v[0:3], v4, s[8:11], 0 offen // 000000000004: E05C1000 80020004\n"
                     "\tds_read_b128 v[8:11], v5       // 00000000000C: D9FE0000 08000005\n"
                     "\ts_waitcnt lgkmcnt(0)           // 000000000014: BF8CC07F\n"
                     "\tv_mfma_f32_32x32x8_bf16 a[0:15], v[8:9], v[10:11], a[0:15] // 000000000018: D3E88000 04021508\n"
                     "\ts_waitcnt ") +
         vmWait +
         "             // 000000000020: BF8C0F70\n"
         "\ts_cbranch_scc1 65527             // 000000000024: BF85FFF7\n"
         "\ts_endpgm                         // 000000000028: BF810000\n";
}

TEST(AmdAsm, CountsOneIteration) {
  CodeCost c = analyzeAmdAssembly(amdLoop("vmcnt(0)"), target("gfx942"), device("gfx942"));
  ASSERT_TRUE(c.error.empty()) << c.error;
  ASSERT_EQ(c.loops.size(), 1u);
  ASSERT_EQ(c.mainLoop, 0);
  const IterationCost &k = c.loops[0].cost;
  EXPECT_EQ(c.loops[0].first, 1u);
  EXPECT_EQ(c.loops[0].last, 6u);
  EXPECT_EQ(k.instructions, 6);
  EXPECT_EQ(k.matrixInstructions, 1);
  EXPECT_EQ(k.matrixCycles, 32);
  EXPECT_EQ(k.matrixFlops, 2.0 * 32 * 32 * 8);
  EXPECT_EQ(k.ldsInstructions, 1);
  EXPECT_EQ(k.ldsCycles, 8);              // b128 on wave64: 8 phases
  EXPECT_EQ(k.globalLoadBytes, 16 * 64);  // dwordx4 for 64 lanes
  EXPECT_EQ(k.saluInstructions, 3);       // two waits and the branch
  // Chain of one pass from t0: load at t0 (done t0+500); ds_read at t0+4
  // (done t0+4+64+8 = t0+76); lgkmcnt(0) stalls to t0+76 (68), issues ->
  // t0+80; MFMA at t0+80 (core busy to t0+112) -> t0+84; vmcnt(0) stalls to
  // t0+500 (416) -> t0+504; branch -> t0+508.
  EXPECT_DOUBLE_EQ(k.chainCycles, 508);
  EXPECT_DOUBLE_EQ(k.exposedLatencyCycles, 68 + 416);
}

TEST(AmdAsm, PrefetchHidesPartOfTheLoad) {
  // vmcnt(1) waits for the previous pass's load only. Passes alternate: a
  // pass that finds that load done takes 92 cycles (84 to the wait, then 8),
  // the next waits for a load issued 92 cycles before its start: it reaches
  // the wait at 84, stalls to 500 - 92 = 408 (324), ends at 416. Mean
  // (92 + 416) / 2 = 254, exposed (68 + 68 + 324) / 2 = 230.
  CodeCost c = analyzeAmdAssembly(amdLoop("vmcnt(1)"), target("gfx942"), device("gfx942"));
  ASSERT_EQ(c.mainLoop, 0);
  EXPECT_DOUBLE_EQ(c.loops[0].cost.chainCycles, 254);
  EXPECT_DOUBLE_EQ(c.loops[0].cost.exposedLatencyCycles, 230);
}

TEST(AmdAsm, KernelTimeIsTheSlowestTermOverTheRounds) {
  CodeCost c = analyzeAmdAssembly(amdLoop("vmcnt(0)"), target("gfx942"), device("gfx942"));
  LaunchShape l;
  l.wavesPerWorkgroup = 4;
  l.occupancy = 8;              // 8 waves per SIMD: 8 workgroups of 4 waves per CU
  l.workgroups = 304 * 8 + 304; // one full round and a last one of 1 per CU
  l.loopTrips = 10;
  {
    KernelEstimate e = estimateKernel(c, l, device("gfx942"));
    ASSERT_TRUE(e.error.empty()) << e.error;
    EXPECT_EQ(e.workgroupsPerUnit, 8);
    EXPECT_EQ(e.rounds, 2);
    // Full round: 8 waves per SIMD, 32 per CU. Per iteration: matrix 8*32 =
    // 256, VALU port 8*1*4 = 32, issue 8*4*3 (SALU) = 96, chain 508, LDS
    // 32*8 = 256, L2 32*1024/64 = 512 -> 512. Last round: 1 workgroup, 1 wave
    // per SIMD: matrix 32, chain 508, LDS 4*8 = 32, L2 4*1024/64 = 64 -> 508.
    // Loop: 10*512 + 10*508 = 10200 cycles; outside (s_mov, s_endpgm: 8
    // cycles) once per round: 16.
    const double clock = 2.1e9;
    EXPECT_NEAR(e.seconds, (10200 + 16) / clock, 1e-15);
    EXPECT_EQ(e.bound, "latency");  // chain 10*508*2 = 10160 > L2 10*512 + 10*64
    for (const Term &t : e.terms)
      if (t.name == "l2")
        EXPECT_NEAR(t.seconds, (5120 + 640) / clock, 1e-15);
  }
}

TEST(AmdAsm, LdsCapsTheWorkgroupsResidentOnAUnit) {
  // Occupancy 1 with one-wave workgroups allows 4 per CU (one per SIMD);
  // their LDS fits only 3: the model keeps 3, so 304 * 3 workgroups are one
  // round and one more makes two.
  CodeCost c = analyzeAmdAssembly(amdLoop("vmcnt(0)"), target("gfx942"), device("gfx942"));
  LaunchShape l;
  l.wavesPerWorkgroup = 1;
  l.occupancy = 1;
  l.loopTrips = 1;
  l.ldsWorkgroupsPerUnit = target("gfx942").ldsWorkgroupsPerCU(20992);
  ASSERT_EQ(l.ldsWorkgroupsPerUnit, 3);
  l.workgroups = 304 * 3;
  KernelEstimate e = estimateKernel(c, l, device("gfx942"));
  ASSERT_TRUE(e.error.empty()) << e.error;
  EXPECT_EQ(e.workgroupsPerUnit, 3);
  EXPECT_EQ(e.rounds, 1);
  l.workgroups += 1;
  EXPECT_EQ(estimateKernel(c, l, device("gfx942")).rounds, 2);
}

TEST(AmdAsm, UndecodableCodeIsAnError) {
  CodeCost c = analyzeAmdAssembly("\t<unknown>  // 000000000000: FFFFFFFF\n", target("gfx942"), device("gfx942"));
  EXPECT_NE(c.error.find("undecodable"), std::string::npos);
  KernelEstimate e = estimateKernel(c, LaunchShape{}, device("gfx942"));
  EXPECT_FALSE(e.error.empty());
}

// sm_90a: a cp.async into shared memory, wait for it, barrier, ldmatrix,
// one mma.sync that reads the ldmatrix result, loop control.
const char *kPtxLoop = R"(
.visible .entry k()
{
	mov.u32 	%r1, 0;
$L__BB0_1:
	{ .reg .u64 d; cvta.to.shared.u64 d, %rd1; cp.async.cg.shared.global [d], [%rd2], 16, %r9; }
	cp.async.commit_group;
	cp.async.wait_group 0;
	bar.sync 	0;
	ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r2,%r3,%r4,%r5}, [%rd3];
	mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1,%f2,%f3,%f4}, {%r2,%r3,%r4,%r5}, {%r6,%r7}, {%f1,%f2,%f3,%f4};
	add.s32 	%r1, %r1, 1;
	setp.lt.s32 	%p1, %r1, 8;
	@%p1 bra 	$L__BB0_1;
	ret;
}
)";

TEST(Ptx, CountsAndChain) {
  CodeCost c = analyzePtx(kPtxLoop, target("sm_90a"), device("sm_90a"));
  ASSERT_TRUE(c.error.empty()) << c.error;
  ASSERT_EQ(c.mainLoop, 0);
  const IterationCost &k = c.loops[0].cost;
  // cvta (inside the inline block), cp.async, commit, wait, bar, ldmatrix,
  // mma, add, setp, bra.
  EXPECT_EQ(k.instructions, 10);
  EXPECT_EQ(k.matrixInstructions, 1);
  EXPECT_EQ(k.matrixCycles, 8);
  EXPECT_EQ(k.globalLoadBytes, 16 * 32);
  EXPECT_EQ(k.ldsCycles, 4 + 4);  // cp.async writes 512 B, ldmatrix.x4 reads 4 x 128 B
  EXPECT_EQ(k.barriers, 1);
  // From t0: cvta -> t0+1; cp.async at t0+1 (done t0+601) -> t0+2; commit ->
  // t0+3; wait_group 0 stalls to t0+601 (598) -> t0+602; bar -> t0+603;
  // ldmatrix at t0+603 (done t0+603+30+4 = t0+637) -> t0+604; mma reads it:
  // stalls to t0+637 (33), core busy to t0+645 -> t0+638; add, setp, bra ->
  // t0+641, where the next pass starts (its mma comes 630 cycles later).
  EXPECT_DOUBLE_EQ(k.chainCycles, 641);
  EXPECT_DOUBLE_EQ(k.exposedLatencyCycles, 598 + 33);
  EXPECT_EQ(c.outside.instructions, 2);  // mov, ret
}

TEST(Ptx, TripsFromMatrixWork) {
  CodeCost c = analyzePtx(kPtxLoop, target("sm_90a"), device("sm_90a"));
  LaunchShape l;
  l.wavesPerWorkgroup = 4;
  l.occupancy = 4;
  l.workgroups = 132;
  l.matrixFlopsPerWorkgroup = 4 * 2.0 * 16 * 8 * 16 * 100;  // 100 passes of 4 warps
  KernelEstimate e = estimateKernel(c, l, device("sm_90a"));
  ASSERT_TRUE(e.error.empty()) << e.error;
  EXPECT_DOUBLE_EQ(e.loopTrips, 100);
  EXPECT_EQ(e.workgroupsPerUnit, 4);
  EXPECT_EQ(e.rounds, 1);
}

TEST(Ptx, LaunchCostAndSustainedBandwidthOnTheH200) {
  // A memory-bound launch: its time is the launch cost plus the bytes at the
  // bandwidth a copy sustains (docs/hardware.md section 11), not at the peak.
  const DeviceFacts &h200 = device("sm_90a");
  ASSERT_GT(h200.launchSeconds, 0);
  ASSERT_GT(h200.sustainedBytesPerSec, 0);
  ASSERT_LT(h200.sustainedBytesPerSec, h200.hbmBytesPerSec);
  CodeCost c = analyzePtx(kPtxLoop, target("sm_90a"), h200);
  LaunchShape l;
  l.wavesPerWorkgroup = 4;
  l.occupancy = 4;
  l.workgroups = 132;
  l.loopTrips = 1;
  l.hbmBytes = 4e9;
  KernelEstimate e = estimateKernel(c, l, h200);
  ASSERT_TRUE(e.error.empty()) << e.error;
  EXPECT_EQ(e.bound, "hbm");
  EXPECT_DOUBLE_EQ(e.seconds, h200.launchSeconds + l.hbmBytes / h200.sustainedBytesPerSec);
  // AMD rows have no measured launch cost: the peak bandwidth, nothing added.
  EXPECT_EQ(device("gfx942").launchSeconds, 0);
}

} // namespace

namespace {

// A k loop whose body holds an element loop: 16 passes (the counter %r5 steps
// by 256 from a thread offset below 256 and loops while the old value is
// below 3840: 3840 / 256 + 1), each loading 2 bytes per lane whose result the
// next pass stores to shared memory (a dependence across the back edge:
// the store comes first in the text).
const char *kNestedPtx = R"(
.visible .entry k()
{
	mov.u32 	%r1, 0;
$L__BB0_1:
	mov.u32 	%r5, %r9;
$L__BB0_2:
	st.shared.u16 	[%rd4], %rs7;
	add.s32 	%r6, %r5, 256;
	setp.lt.u32 	%p5, %r5, 3840;
	mov.u32 	%r5, %r6;
	ld.global.u16 	%rs7, [%rd5];
	@%p5 bra 	$L__BB0_2;
	mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1,%f2,%f3,%f4}, {%r2,%r3,%r4,%r5}, {%r6,%r7}, {%f1,%f2,%f3,%f4};
	add.s32 	%r1, %r1, 1;
	setp.lt.s32 	%p1, %r1, %r8;
	@%p1 bra 	$L__BB0_1;
	ret;
}
)";

TEST(Ptx, NestedLoopRunsItsCountedPasses) {
  CodeCost c = analyzePtx(kNestedPtx, target("sm_90a"), device("sm_90a"));
  ASSERT_TRUE(c.error.empty()) << c.error;
  ASSERT_EQ(c.loops.size(), 2u);
  ASSERT_GE(c.mainLoop, 0);
  const LoopInfo &k = c.loops[size_t(c.mainLoop)];
  EXPECT_EQ(k.cost.matrixInstructions, 1);
  // The inner loop's 6 instructions run 16 times: the range prices one pass,
  // the other 15 are added; plus the outer's own 5 (mov, mma, add, setp, bra).
  EXPECT_EQ(k.cost.instructions, 5 + 16 * 6);
  EXPECT_EQ(k.cost.globalLoadBytes, 16 * 2 * 32);
  // Each inner pass starts with the store, which waits for the previous
  // pass's load: a pass whose store issues at S issues its load at S+4 (the
  // 5th instruction), so the next store waits until S+4+600: 604 cycles.
  EXPECT_DOUBLE_EQ(c.loops[0].cost.chainCycles, 604);
}

} // namespace

namespace {

// Two back branches whose ranges overlap without nesting (the second jumps
// into the middle of the first's range): one loop of code, not two. The
// main loop is the first (the smaller, neither has matrix or memory work);
// the second must not add its counted passes (17, from %r3 stepped by 4 to
// 64) to the code outside.
const char *kOverlappingPtx = R"(
.visible .entry k()
{
	mov.u32 	%r1, 0;
$A:
	add.s32 	%r2, %r2, 1;
$B:
	add.s32 	%r3, %r3, 4;
	setp.lt.u32 	%p1, %r3, 64;
	@%p1 bra 	$A;
	add.s32 	%r4, %r4, 1;
	@%p2 bra 	$B;
	ret;
}
)";

TEST(Ptx, OverlappingBackBranchesAreNotCountedTwice) {
  CodeCost c = analyzePtx(kOverlappingPtx, target("sm_90a"), device("sm_90a"));
  ASSERT_TRUE(c.error.empty()) << c.error;
  ASSERT_EQ(c.loops.size(), 2u);
  ASSERT_EQ(c.mainLoop, 0);
  EXPECT_EQ(c.outside.instructions, 4);  // mov, the add after the first loop, the branch, ret
}

} // namespace
