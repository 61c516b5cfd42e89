// The matrix-instruction layouts the compiler plans with (MatrixInstr::operandMN,
// operandK, dRow, dCol in lib/Target) against the vendors' tables in
// tests/data/matrix-layouts (AMD's calculator; NVIDIA's PTX ISA fragments),
// lane by lane and element by element, for every instruction of every target. The tables are
// independent of our reading of the ISA: a layout bug shared by the emitter,
// the emulator and this code still shows up here.
#include "Target/Target.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

using namespace tilec;

namespace {

std::string folderOf(const std::string &arch) {
  return arch == "gfx942" ? "cdna3" : arch == "gfx90a" ? "cdna2" : arch == "sm_90a" ? "ptx" : "rdna3";
}

/// Rows of a calculator table: lane -> the cells after the lane column.
std::vector<std::vector<std::string>> readTable(const std::string &path) {
  std::ifstream in(path);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  if (!in || !std::getline(in, line))  // header
    return rows;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ','))
      cells.push_back(cell);
    cells.erase(cells.begin());  // the lane number (rows are in lane order)
    rows.push_back(cells);
  }
  return rows;
}

/// "A[12][3]" -> {12, 3}.
std::pair<int, int> indices(const std::string &cell) {
  static const std::regex re("[ABD]\\[([0-9]+)\\]\\[([0-9]+)\\]");
  std::smatch m;
  if (!std::regex_match(cell, m, re))
    return {-1, -1};
  return {std::stoi(m[1]), std::stoi(m[2])};
}

struct Case {
  std::string arch;
  const MatrixInstr *instr;
};

std::vector<Case> allInstrs() {
  std::vector<Case> out;
  for (const char *arch : {"gfx942", "gfx90a", "gfx1151", "sm_90a"})
    for (const MatrixInstr &mi : lookupTarget(arch)->matrixInstrs)
      out.push_back({arch, &mi});
  return out;
}

class LayoutTable : public ::testing::TestWithParam<Case> {};

TEST_P(LayoutTable, OperandsAndAccumulatorMatchTheCalculator) {
  const MatrixInstr &mi = *GetParam().instr;
  // The calculator tables cover the fp8 forms; bf8 (e5m2) operands have the
  // same lane layout (docs/hardware.md section 1), so they are checked against those.
  std::string table = std::regex_replace(mi.name, std::regex("bf8"), "fp8");
  const std::string base = std::string(TILEC_LAYOUT_DIR) + "/" + folderOf(GetParam().arch) + "/" + table;
  // A warpgroup instruction's accumulator spans its waves' lanes; its B comes
  // from shared memory (no register layout, no table), its A too unless it
  // has a register form (aRegsPerLane elements a lane).
  const int lanes = mi.waveSize * mi.waves;
  for (char which : {'A', 'B', 'D'}) {
    if (mi.operandsInSharedMemory() && (which == 'B' || (which == 'A' && mi.aRegsPerLane == 0)))
      continue;
    auto rows = readTable(base + "." + which + ".csv");
    ASSERT_EQ(static_cast<int>(rows.size()), lanes) << "missing or short table " << base << "." << which << ".csv";
    for (int l = 0; l < lanes; ++l) {
      const int elems = which == 'D'                   ? mi.accPerLane
                        : mi.operandsInSharedMemory() ? mi.aRegsPerLane
                                                      : mi.operandElems(which == 'B');
      ASSERT_EQ(static_cast<int>(rows[l].size()), elems)
          << which << " lane " << l;
      for (int r = 0; r < static_cast<int>(rows[l].size()); ++r) {
        auto [i, j] = indices(rows[l][r]);
        SCOPED_TRACE(std::string(1, which) + " lane " + std::to_string(l) + " element " + std::to_string(r) +
                     ": table says " + rows[l][r]);
        if (which == 'A') {         // A[m][k]
          EXPECT_EQ(mi.operandMN(false, l, r), i);
          EXPECT_EQ(mi.operandK(false, l, r), j);
        } else if (which == 'B') {  // B[k][n]
          EXPECT_EQ(mi.operandK(true, l, r), i);
          EXPECT_EQ(mi.operandMN(true, l, r), j);
        } else {                    // D[m][n]
          EXPECT_EQ(mi.dRow(l, r), i);
          EXPECT_EQ(mi.dCol(l, r), j);
        }
      }
    }
  }
}

// Which accumulators a gemm reads as its A operand in registers (attention's
// P): mma.m16n8k16 after itself (two m16n8 accumulators are one A fragment),
// wgmma's register form after any wgmma of the same type and rows (its A
// fragment is the accumulator layout of 16 columns); not across the two
// families, whose lanes split rows differently, nor on AMD, whose
// accumulators are transposed to their operands.
TEST(AccumulatorAsOperandA, FollowsTheLaneLayouts) {
  const TargetInfo &nv = *lookupTarget("sm_90a");
  const MatrixInstr *mma = nv.findInstr("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32");
  const MatrixInstr *wg64 = nv.findInstr("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16");
  const MatrixInstr *wg128 = nv.findInstr("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16");
  const MatrixInstr *wg256 = nv.findInstr("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16");
  ASSERT_TRUE(mma && wg64 && wg128 && wg256);
  EXPECT_TRUE(accumulatorHoldsOperandA(*mma, *mma));
  for (const MatrixInstr *acc : {wg64, wg128, wg256})
    for (const MatrixInstr *use : {wg64, wg128, wg256})
      EXPECT_TRUE(accumulatorHoldsOperandA(*acc, *use)) << acc->name << " -> " << use->name;
  EXPECT_FALSE(accumulatorHoldsOperandA(*mma, *wg128));
  EXPECT_FALSE(accumulatorHoldsOperandA(*wg64, *mma));
  for (const char *arch : {"gfx942", "gfx90a", "gfx1151"})
    for (const MatrixInstr &acc : lookupTarget(arch)->matrixInstrs)
      for (const MatrixInstr &use : lookupTarget(arch)->matrixInstrs)
        EXPECT_FALSE(accumulatorHoldsOperandA(acc, use)) << arch << " " << acc.name << " -> " << use.name;
}

INSTANTIATE_TEST_SUITE_P(VendorTables, LayoutTable, ::testing::ValuesIn(allInstrs()),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           std::string name = info.param.arch + "_" + info.param.instr->name;
                           std::replace(name.begin(), name.end(), '.', '_');
                           return name;
                         });

} // namespace
