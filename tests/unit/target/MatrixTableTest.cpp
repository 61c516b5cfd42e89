// The matrix-instruction table (MatrixInstr rows in lib/Target/Target.cpp)
// against what its consumers rely on: each row's device-prelude atom exists in
// the prelude its target's kernels include, with the row's shape and per-lane
// counts; a row's wave size is its target's; rows that share an emulator op
// describe one operation. (The lane maps are checked against the vendors'
// tables by LayoutTableTest.cpp, and the emulator's own formulas by
// tests/unit/emu/InstructionTest.cpp.)
#include "Emit/Prelude.h"
#include "Target/Target.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>

using namespace tilec;

namespace {

/// The constants of atom `atom` in `prelude` ("M" -> "32", "N" -> "N_", ...);
/// empty when the prelude declares no such atom.
std::map<std::string, std::string> atomConstants(const std::string &prelude, std::string_view atom) {
  std::map<std::string, std::string> out;
  std::smatch decl;  // "struct ATOM {" or "struct ATOM : BASE {"
  if (!std::regex_search(prelude, decl, std::regex("struct " + std::string(atom) + "( : [^{;]*)? \\{")))
    return out;
  const size_t at = decl.position(0);
  const std::string body = prelude.substr(at, prelude.find(';', at) - at + 1);
  std::smatch m;
  if (!std::regex_search(body, m, std::regex("static constexpr int ([^;]*);")))
    return out;
  const std::regex field("(\\w+) = ([^,]+)");
  const std::string list = m[1];
  for (auto it = std::sregex_iterator(list.begin(), list.end(), field); it != std::sregex_iterator(); ++it)
    out[(*it)[1]] = (*it)[2];
  return out;
}

/// The value of an atom constant: a number, or N_ (the atom's N template
/// argument) optionally divided by a number.
int evaluate(const std::string &expr, int n) {
  std::smatch m;
  if (std::regex_match(expr, m, std::regex("N_ / ([0-9]+)")))
    return n / std::stoi(m[1]);
  return expr == "N_" ? n : std::stoi(expr);
}

TEST(MatrixTable, EveryRowsAtomIsInItsTargetsPreludeWithTheRowsShape) {
  for (const TargetInfo &t : knownTargets())
    for (const MatrixInstr &mi : t.matrixInstrs) {
      SCOPED_TRACE(t.arch + " " + mi.name + " -> tl::" + std::string(mi.atom));
      ASSERT_FALSE(mi.atom.empty());
      std::map<std::string, std::string> c = atomConstants(devicePreludeText(t.vendor), mi.atom);
      ASSERT_FALSE(c.empty()) << "the prelude declares no atom " << mi.atom;
      for (const char *key : {"M", "N", "K", "Lanes", "KPerLane", "AccPerLane"})
        ASSERT_TRUE(c.count(key)) << key;
      // An atom that takes N as a template argument declares N = N_.
      EXPECT_EQ(c["N"] == "N_", mi.atomTakesN);
      EXPECT_EQ(evaluate(c["M"], mi.n), mi.m);
      EXPECT_EQ(evaluate(c["N"], mi.n), mi.n);
      EXPECT_EQ(evaluate(c["K"], mi.n), mi.k);
      EXPECT_EQ(evaluate(c["Lanes"], mi.n), mi.waveSize * mi.waves);
      EXPECT_EQ(evaluate(c["KPerLane"], mi.n), mi.kPerLane);
      EXPECT_EQ(evaluate(c["AccPerLane"], mi.n), mi.accPerLane);
    }
}

TEST(MatrixTable, RowsAreConsistentWithTheirTargetAndFamily) {
  for (const TargetInfo &t : knownTargets())
    for (const MatrixInstr &mi : t.matrixInstrs) {
      SCOPED_TRACE(t.arch + " " + mi.name);
      EXPECT_EQ(mi.waveSize, t.waveSize);
      EXPECT_EQ(t.findInstr(mi.name), &mi) << "two rows of one target share a name";
      ASSERT_NE(mi.lanes, nullptr);
      // A lane's operand elements are whole runs of k; operands read from
      // shared memory have no register layout, and only warpgroup
      // instructions read them there (accumulatorHoldsOperandA relies on it).
      if (mi.operandsInSharedMemory()) {
        EXPECT_EQ(mi.kPerLane + mi.bPerLane + mi.kRun, 0);
        EXPECT_GT(mi.waves, 1);
        EXPECT_EQ(mi.emuOp, -1);
      } else {
        EXPECT_GT(mi.kRun, 0);
        EXPECT_EQ(mi.kPerLane % mi.kRun, 0);
        EXPECT_EQ(mi.bPerLane % mi.kRun, 0);
        // Every lane holds its share of A, B and C exactly once over the wave.
        EXPECT_EQ(mi.kPerLane * mi.waveSize % (mi.m * mi.k), 0);
        EXPECT_EQ(mi.bPerLane * mi.waveSize % (mi.n * mi.k), 0);
      }
      EXPECT_EQ(mi.accPerLane * mi.waveSize * mi.waves, mi.m * mi.n);
    }
}

// sm_90a multiplies the OCP fp8 formats with mma.sync m16n8k32 (PTX ISA,
// .e4m3/.e5m2 with f32 accumulation) at warp level and with wgmma m64nNk32
// (N = 256, 128, 64) at warpgroup level, both operands K-major: no row takes
// gfx942's fnuz formats. Each row's hardware function is defined by the CUDA
// hardware layer (the PTX instruction of the row's name) and by the
// emulator's.
TEST(MatrixTable, Sm90aMultipliesOcpFp8WithMmaM16n8k32) {
  const TargetInfo &t = *lookupTarget("sm_90a");
  for (ElemType type : {ElemType::FP8E4M3FN, ElemType::FP8E5M2}) {
    SCOPED_TRACE(std::string(elemTypeName(type)));
    const std::vector<const MatrixInstr *> rows = t.instrsFor(type);
    ASSERT_EQ(rows.size(), 1u);
    const MatrixInstr &mi = *rows[0];
    const std::string ptxType = type == ElemType::FP8E4M3FN ? "e4m3" : "e5m2";
    EXPECT_EQ(mi.name, "mma.sync.aligned.m16n8k32.row.col.f32." + ptxType + "." + ptxType + ".f32");
    EXPECT_EQ(mi.family, MatrixFamily::MMA);
    EXPECT_EQ(mi.m, 16);
    EXPECT_EQ(mi.n, 8);
    EXPECT_EQ(mi.k, 32);
    EXPECT_EQ(mi.kPerLane, 16);  // four 32-bit registers of four bytes
    EXPECT_EQ(mi.bPerLane, 8);   // two
    EXPECT_EQ(mi.kRun, 4);       // a register's four bytes are consecutive in k
    EXPECT_EQ(mi.accType, ElemType::F32);
    const std::vector<const MatrixInstr *> wg = t.warpgroupInstrsFor(type);
    ASSERT_EQ(wg.size(), 3u);
    for (int i = 0; i < 3; ++i) {
      const int n = 256 >> i;  // larger N first
      EXPECT_EQ(wg[i]->name, "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k32.f32." + ptxType + "." + ptxType);
      EXPECT_EQ(wg[i]->n, n);
      EXPECT_EQ(wg[i]->k, 32);
      EXPECT_EQ(wg[i]->accPerLane, n / 2);
      EXPECT_TRUE(wg[i]->kMajorOperandsOnly);
      EXPECT_EQ(wg[i]->aRegsPerLane, 0);  // no register form
    }
    const std::string cuda = cudaPreludeText(), emu = emulatorPreludeText();
    EXPECT_NE(cuda.find("wgmma.mma_async.sync.aligned.m64n\" #N \"k32.f32.\" TYPE"), std::string::npos);
    EXPECT_NE(cuda.find("TL_WGMMA_K32_ASM(256, 128, \"" + ptxType + "\")"), std::string::npos);
    EXPECT_NE(emu.find("TL_INLINE void wgmma_m64k32("), std::string::npos);
    EXPECT_NE(cuda.find("TL_INLINE float4_t " + mi.builtin + "(uint4_t a, uint2_t b, float4_t c)"), std::string::npos);
    EXPECT_NE(cuda.find("asm(\"" + mi.name + " "), std::string::npos);
    EXPECT_NE(emu.find("TL_INLINE float4_t " + mi.builtin + "(uint4_t a, uint2_t b, float4_t c)"), std::string::npos);
  }
  for (ElemType fnuz : {ElemType::FP8E4M3FNUZ, ElemType::FP8E5M2FNUZ})
    EXPECT_TRUE(t.instrsFor(fnuz).empty() && t.warpgroupInstrsFor(fnuz).empty());
  for (const char *amd : {"gfx942", "gfx90a", "gfx1151"})
    for (ElemType ocp : {ElemType::FP8E4M3FN, ElemType::FP8E5M2})
      EXPECT_TRUE(lookupTarget(amd)->instrsFor(ocp).empty()) << amd;
}

TEST(MatrixTable, RowsSharingAnEmulatorOpDescribeOneOperation) {
  std::map<int, const MatrixInstr *> byOp;
  for (const TargetInfo &t : knownTargets())
    for (const MatrixInstr &mi : t.matrixInstrs) {
      if (mi.emuOp < 0)
        continue;
      SCOPED_TRACE(t.arch + " " + mi.name);
      auto [it, fresh] = byOp.emplace(mi.emuOp, &mi);
      if (fresh)
        continue;
      const MatrixInstr &o = *it->second;
      EXPECT_EQ(std::tie(mi.m, mi.n, mi.k, mi.kPerLane, mi.bPerLane, mi.accPerLane, mi.waveSize, mi.waves),
                std::tie(o.m, o.n, o.k, o.kPerLane, o.bPerLane, o.accPerLane, o.waveSize, o.waves));
      EXPECT_EQ(mi.aType, o.aType);
      EXPECT_EQ(mi.family, o.family);
      EXPECT_EQ(mi.lanes, o.lanes);
      EXPECT_EQ(findInstrByEmuOp(mi.emuOp), it->second);
    }
}

} // namespace
