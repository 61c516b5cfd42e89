#include "Target/Target.h"

#include <algorithm>
#include <cmath>

namespace tilec {

std::string_view elemTypeName(ElemType t) {
  switch (t) {
  case ElemType::F32: return "f32";
  case ElemType::F16: return "f16";
  case ElemType::BF16: return "bf16";
  case ElemType::FP8E4M3FNUZ: return "f8E4M3FNUZ";
  case ElemType::FP8E5M2FNUZ: return "f8E5M2FNUZ";
  case ElemType::FP8E4M3FN: return "f8E4M3FN";
  case ElemType::FP8E5M2: return "f8E5M2";
  case ElemType::I8: return "i8";
  case ElemType::I32: return "i32";
  }
  return "?";
}

std::optional<ElemType> parseElemType(std::string_view s) {
  for (ElemType t : {ElemType::F32, ElemType::F16, ElemType::BF16, ElemType::FP8E4M3FNUZ,
                     ElemType::FP8E5M2FNUZ, ElemType::FP8E4M3FN, ElemType::FP8E5M2, ElemType::I8,
                     ElemType::I32})
    if (elemTypeName(t) == s)
      return t;
  return std::nullopt;
}

int elemTypeBytes(ElemType t) {
  switch (t) {
  case ElemType::F32: case ElemType::I32: return 4;
  case ElemType::F16: case ElemType::BF16: return 2;
  default: return 1;
  }
}

static int roundUp(int v, int g) { return (v + g - 1) / g * g; }

int TargetInfo::occupancy(int vgpr, int agpr, long ldsBytes, int wavesPerWorkgroup) const {
  // Register limit (docs/hardware.md section 6).
  int regs = hasAgprs ? roundUp(roundUp(std::max(vgpr, 1), 4) + agpr, vgprGranule)
                      : roundUp(std::max(vgpr, 1), vgprGranule);
  int waves = std::min(maxWavesPerSIMD, vgprFile / regs);
  // LDS limit: workgroups per CU (per WGP on gfx11) share its LDS; their waves
  // spread over the 4 SIMDs of a CU (gfx11: 2 CUs x 2 SIMDs of a WGP).
  if (ldsBytes > 0) {
    long wgs = ldsWorkgroupsPerCU(ldsBytes);
    int simds = 4;
    // Fewer waves than SIMDs (one-wave workgroups, 3 per CU): each runs on a
    // SIMD of its own, so the busiest SIMD holds one.
    long ldsWaves = wgs > 0 ? std::max<long>(1, wgs * wavesPerWorkgroup / simds) : 0;
    waves = static_cast<int>(std::min<long>(waves, ldsWaves));
  }
  return waves;
}

std::vector<const MatrixInstr *> TargetInfo::instrsFor(ElemType t) const {
  std::vector<const MatrixInstr *> out;
  for (const MatrixInstr &mi : matrixInstrs)
    if (mi.aType == t && mi.waves == 1)
      out.push_back(&mi);
  return out;
}

std::vector<const MatrixInstr *> TargetInfo::warpgroupInstrsFor(ElemType t) const {
  std::vector<const MatrixInstr *> out;
  for (const MatrixInstr &mi : matrixInstrs)
    if (mi.aType == t && mi.waves > 1)
      out.push_back(&mi);
  return out;
}

const MatrixInstr *TargetInfo::findInstr(std::string_view name) const {
  for (const MatrixInstr &mi : matrixInstrs)
    if (mi.name == name)
      return &mi;
  return nullptr;
}

std::optional<MatrixTiling> selectMatrixTiling(const TargetInfo &target, ElemType t, int64_t m, int64_t n,
                                               int64_t k, int waves) {
  std::vector<std::pair<int, int>> grids;
  for (int wm = 1; wm <= waves; ++wm)
    if (waves % wm == 0)
      grids.push_back({wm, waves / wm});
  auto skew = [&](std::pair<int, int> g) {
    return std::abs(std::log2(double(m) / g.first) - std::log2(double(n) / g.second));
  };
  std::stable_sort(grids.begin(), grids.end(), [&](auto x, auto y) { return skew(x) < skew(y); });
  for (const MatrixInstr *mi : target.instrsFor(t)) {
    if (k % mi->k)
      continue;
    for (auto [wm, wn] : grids)
      if (m % (int64_t(wm) * mi->m) == 0 && n % (int64_t(wn) * mi->n) == 0)
        return MatrixTiling{mi, wm, wn};
  }
  return std::nullopt;
}

// --- register layouts of the matrix instructions (docs/hardware.md sections 1-2) ---

namespace {

// AMD MFMA: lane l holds row l % m of A (column of B); lanes l / m = 0, 1, ..
// hold consecutive groups of kPerLane k. B uses A's formulas with m -> n.
int mfmaOperandMN(const MatrixInstr &mi, bool, int l, int) { return l % mi.m; }
int mfmaOperandK(const MatrixInstr &mi, bool, int l, int r) { return mi.kPerLane * (l / mi.m) + r; }
int mfmaCol(const MatrixInstr &mi, int l, int) { return l % mi.n; }

/// MFMA 32x32: D[8(r/4) + 4(l/32) + r%4][l%32].
const LaneMaps kMfma32Lanes = {
    .operandMN = mfmaOperandMN,
    .operandK = mfmaOperandK,
    .dRow = [](const MatrixInstr &, int l, int r) { return 8 * (r / 4) + 4 * (l / 32) + r % 4; },
    .dCol = mfmaCol,
};

/// MFMA 16x16: D[4(l/16) + r][l%16].
const LaneMaps kMfma16Lanes = {
    .operandMN = mfmaOperandMN,
    .operandK = mfmaOperandK,
    .dRow = [](const MatrixInstr &, int l, int r) { return 4 * (l / 16) + r; },
    .dCol = mfmaCol,
};

/// WMMA (wave32): lane l holds all of row l % 16 of A, so lanes l and l + 16
/// hold the same (duplicated) row; D[2r + l/16][l%16].
const LaneMaps kWmmaLanes = {
    .operandMN = [](const MatrixInstr &mi, bool, int l, int) { return l % mi.m; },
    .operandK = [](const MatrixInstr &, bool, int, int r) { return r; },
    .dRow = [](const MatrixInstr &, int l, int r) { return 2 * r + l / 16; },
    .dCol = [](const MatrixInstr &mi, int l, int) { return l % mi.n; },
};

// NVIDIA mma.m16n8k16 (g = l / 4, t = l % 4): A's 8 elements are the pairs
// A[g][2t..], A[g+8][2t..], A[g][2t+8..], A[g+8][2t+8..]; B's 4 are
// B[2t..][g], B[2t+8..][g]; D[g + 8(r/2)][2t + r%2].
int mmaRow(int l, int r) { return l / 4 + 8 * (r / 2); }
int mmaCol(int l, int r) { return 2 * (l % 4) + r % 2; }

const LaneMaps kMmaLanes = {
    .operandMN = [](const MatrixInstr &, bool b, int l, int r) { return b ? l / 4 : l / 4 + 8 * ((r / 2) % 2); },
    .operandK = [](const MatrixInstr &, bool b, int l, int r) { return 2 * (l % 4) + r % 2 + 8 * (b ? r / 2 : r / 4); },
    .dRow = [](const MatrixInstr &, int l, int r) { return mmaRow(l, r); },
    .dCol = [](const MatrixInstr &, int l, int r) { return mmaCol(l, r); },
};

// NVIDIA mma.m16n8k32 with 8-bit operands (e4m3, e5m2): the m16n8k16 layout
// with each 32-bit register holding four elements consecutive in k instead
// of two, and the upper half of k at +16: A's 16 elements are the runs
// A[g][4t..], A[g+8][4t..], A[g][4t+16..], A[g+8][4t+16..]; B's 8 are
// B[4t..][g], B[4t+16..][g]; D as m16n8k16.
const LaneMaps kMmaK32Lanes = {
    .operandMN = [](const MatrixInstr &, bool b, int l, int r) { return b ? l / 4 : l / 4 + 8 * ((r / 4) % 2); },
    .operandK = [](const MatrixInstr &, bool b, int l, int r) { return 4 * (l % 4) + r % 4 + 16 * (b ? r / 4 : r / 8); },
    .dRow = [](const MatrixInstr &, int l, int r) { return mmaRow(l, r); },
    .dCol = [](const MatrixInstr &, int l, int r) { return mmaCol(l, r); },
};

/// wgmma m64nNk16: B is read from shared memory (no lane holds its elements:
/// -1), A from shared memory or, in the register form, as 8 elements a lane:
/// warp l / 32 holds rows 16(l/32).. in mma.m16n8k16's A layout. D: warp l / 32
/// holds rows 16(l/32).., the mma.m16n8 accumulator layout repeated every 8
/// columns.
const LaneMaps kWgmmaLanes = {
    .operandMN = [](const MatrixInstr &, bool b, int l, int r) { return b ? -1 : 16 * (l / 32) + (l % 32) / 4 + 8 * ((r / 2) % 2); },
    .operandK = [](const MatrixInstr &, bool b, int l, int r) { return b ? -1 : 2 * (l % 4) + r % 2 + 8 * (r / 4); },
    .dRow = [](const MatrixInstr &, int l, int r) { return 16 * (l / 32) + mmaRow(l % 32, r % 4); },
    .dCol = [](const MatrixInstr &, int l, int r) { return 8 * (r / 4) + mmaCol(l, r); },
};

} // namespace

static std::vector<TargetInfo> buildTargets() {
  using E = ElemType;
  using F = MatrixFamily;
  std::vector<TargetInfo> ts;

  // gfx942: MI300X, CDNA3 (docs/hardware.md sections 1, 3, 4, 6).
  ts.push_back(TargetInfo{
      .arch = "gfx942",
      .marketing = "MI300X (CDNA3)",
      .vendor = Vendor::AMD,
      .waveSize = 64,
      .ldsBytesPerWorkgroup = 65536,
      .ldsBytesPerCU = 65536,
      .ldsBanks = 32,
      .maxWavesPerSIMD = 8,
      .vgprFile = 512,
      .vgprGranule = 8,
      .maxVgprPerWave = 256,
      .hasAgprs = true,
      .matrixInstrs = {
          {.name = "v_mfma_f32_32x32x8_bf16",
           .builtin = "__builtin_amdgcn_mfma_f32_32x32x8bf16_1k",
           .family = F::MFMA,
           .m = 32, .n = 32, .k = 8,
           .aType = E::BF16, .accType = E::F32,
           .kPerLane = 4, .bPerLane = 4, .accPerLane = 16, .kRun = 4,
           .cycles = 32, .waveSize = 64,
           .lanes = &kMfma32Lanes,
           .atom = "Mfma32x32x8",
           .emuOp = 0},  // TL_EMU_MFMA_F32_32X32X8_BF16
          {.name = "v_mfma_f32_16x16x16_bf16",
           .builtin = "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k",
           .family = F::MFMA,
           .m = 16, .n = 16, .k = 16,
           .aType = E::BF16, .accType = E::F32,
           .kPerLane = 4, .bPerLane = 4, .accPerLane = 4, .kRun = 4,
           .cycles = 16, .waveSize = 64,
           .lanes = &kMfma16Lanes,
           .atom = "Mfma16x16x16",
           .emuOp = 1},  // TL_EMU_MFMA_F32_16X16X16_BF16
          {.name = "v_mfma_f32_32x32x8_f16",
           .builtin = "__builtin_amdgcn_mfma_f32_32x32x8f16",
           .family = F::MFMA,
           .m = 32, .n = 32, .k = 8,
           .aType = E::F16, .accType = E::F32,
           .kPerLane = 4, .bPerLane = 4, .accPerLane = 16, .kRun = 4,
           .cycles = 32, .waveSize = 64,
           .lanes = &kMfma32Lanes,
           .atom = "Mfma32x32x8",
           .emuOp = 2},  // TL_EMU_MFMA_F32_32X32X8_F16
          {.name = "v_mfma_f32_16x16x16_f16",
           .builtin = "__builtin_amdgcn_mfma_f32_16x16x16f16",
           .family = F::MFMA,
           .m = 16, .n = 16, .k = 16,
           .aType = E::F16, .accType = E::F32,
           .kPerLane = 4, .bPerLane = 4, .accPerLane = 4, .kRun = 4,
           .cycles = 16, .waveSize = 64,
           .lanes = &kMfma16Lanes,
           .atom = "Mfma16x16x16",
           .emuOp = 3},  // TL_EMU_MFMA_F32_16X16X16_F16
          {.name = "v_mfma_f32_32x32x16_fp8_fp8",
           .builtin = "__builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8",
           .family = F::MFMA,
           .m = 32, .n = 32, .k = 16,
           .aType = E::FP8E4M3FNUZ, .accType = E::F32,
           .kPerLane = 8, .bPerLane = 8, .accPerLane = 16, .kRun = 8,
           .cycles = 32, .waveSize = 64,
           .lanes = &kMfma32Lanes,
           .atom = "Mfma32x32x16",
           .emuOp = 6},  // TL_EMU_MFMA_F32_32X32X16_FP8_FP8
          {.name = "v_mfma_f32_16x16x32_fp8_fp8",
           .builtin = "__builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8",
           .family = F::MFMA,
           .m = 16, .n = 16, .k = 32,
           .aType = E::FP8E4M3FNUZ, .accType = E::F32,
           .kPerLane = 8, .bPerLane = 8, .accPerLane = 4, .kRun = 8,
           .cycles = 16, .waveSize = 64,
           .lanes = &kMfma16Lanes,
           .atom = "Mfma16x16x32",
           .emuOp = 7},  // TL_EMU_MFMA_F32_16X16X32_FP8_FP8
          // bf8 = e5m2fnuz (section 8): the fp8 instructions' lane layout and cycles (section 1).
          {.name = "v_mfma_f32_32x32x16_bf8_bf8",
           .builtin = "__builtin_amdgcn_mfma_f32_32x32x16_bf8_bf8",
           .family = F::MFMA,
           .m = 32, .n = 32, .k = 16,
           .aType = E::FP8E5M2FNUZ, .accType = E::F32,
           .kPerLane = 8, .bPerLane = 8, .accPerLane = 16, .kRun = 8,
           .cycles = 32, .waveSize = 64,
           .lanes = &kMfma32Lanes,
           .atom = "Mfma32x32x16",
           .emuOp = 8},  // TL_EMU_MFMA_F32_32X32X16_BF8_BF8
          {.name = "v_mfma_f32_16x16x32_bf8_bf8",
           .builtin = "__builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8",
           .family = F::MFMA,
           .m = 16, .n = 16, .k = 32,
           .aType = E::FP8E5M2FNUZ, .accType = E::F32,
           .kPerLane = 8, .bPerLane = 8, .accPerLane = 4, .kRun = 8,
           .cycles = 16, .waveSize = 64,
           .lanes = &kMfma16Lanes,
           .atom = "Mfma16x16x32",
           .emuOp = 9},  // TL_EMU_MFMA_F32_16X16X32_BF8_BF8
      },
      .bufferRsrcFlags = 0x00020000u,
  });

  // gfx90a: MI200, CDNA2.
  ts.push_back(TargetInfo{
      .arch = "gfx90a",
      .marketing = "MI250X (CDNA2)",
      .vendor = Vendor::AMD,
      .waveSize = 64,
      .ldsBytesPerWorkgroup = 65536,
      .ldsBytesPerCU = 65536,
      .ldsBanks = 32,
      .maxWavesPerSIMD = 8,
      .vgprFile = 512,
      .vgprGranule = 8,
      .maxVgprPerWave = 256,
      .hasAgprs = true,
      .matrixInstrs = {
          {.name = "v_mfma_f32_32x32x8bf16_1k",
           .builtin = "__builtin_amdgcn_mfma_f32_32x32x8bf16_1k",
           .family = F::MFMA,
           .m = 32, .n = 32, .k = 8,
           .aType = E::BF16, .accType = E::F32,
           .kPerLane = 4, .bPerLane = 4, .accPerLane = 16, .kRun = 4,
           .cycles = 64, .waveSize = 64,
           .lanes = &kMfma32Lanes,
           .atom = "Mfma32x32x8",
           .emuOp = 0},  // TL_EMU_MFMA_F32_32X32X8_BF16
          {.name = "v_mfma_f32_16x16x16bf16_1k",
           .builtin = "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k",
           .family = F::MFMA,
           .m = 16, .n = 16, .k = 16,
           .aType = E::BF16, .accType = E::F32,
           .kPerLane = 4, .bPerLane = 4, .accPerLane = 4, .kRun = 4,
           .cycles = 32, .waveSize = 64,
           .lanes = &kMfma16Lanes,
           .atom = "Mfma16x16x16",
           .emuOp = 1},  // TL_EMU_MFMA_F32_16X16X16_BF16
          {.name = "v_mfma_f32_32x32x8f16",
           .builtin = "__builtin_amdgcn_mfma_f32_32x32x8f16",
           .family = F::MFMA,
           .m = 32, .n = 32, .k = 8,
           .aType = E::F16, .accType = E::F32,
           .kPerLane = 4, .bPerLane = 4, .accPerLane = 16, .kRun = 4,
           .cycles = 64, .waveSize = 64,
           .lanes = &kMfma32Lanes,
           .atom = "Mfma32x32x8",
           .emuOp = 2},  // TL_EMU_MFMA_F32_32X32X8_F16
          {.name = "v_mfma_f32_16x16x16f16",
           .builtin = "__builtin_amdgcn_mfma_f32_16x16x16f16",
           .family = F::MFMA,
           .m = 16, .n = 16, .k = 16,
           .aType = E::F16, .accType = E::F32,
           .kPerLane = 4, .bPerLane = 4, .accPerLane = 4, .kRun = 4,
           .cycles = 32, .waveSize = 64,
           .lanes = &kMfma16Lanes,
           .atom = "Mfma16x16x16",
           .emuOp = 3},  // TL_EMU_MFMA_F32_16X16X16_F16
      },
      .bufferRsrcFlags = 0x00020000u,
      // MI200's f16 and bf16 MFMAs flush subnormal inputs and outputs to zero
      // (AMD's MIOpen documentation, "MI200 matrix fused multiply-add (MFMA)
      // behavior specifics"; no other AMD GPU does, per AMD's note in
      // onnxruntime pull request 13352). Not verified on hardware here.
      .matrixFlushes16BitSubnormals = true,
  });

  // gfx1151: Strix Halo, RDNA 3.5, wave32 WMMA (section 2); 128 KiB LDS per WGP,
  // 64 KiB per workgroup; 1536 VGPRs per SIMD, granule 24 (section 6).
  ts.push_back(TargetInfo{
      .arch = "gfx1151",
      .marketing = "Radeon 8060S, Strix Halo (RDNA 3.5)",
      .vendor = Vendor::AMD,
      .waveSize = 32,
      .ldsBytesPerWorkgroup = 65536,
      .ldsBytesPerCU = 131072,
      .ldsBanks = 32,
      .maxWavesPerSIMD = 16,
      .vgprFile = 1536,
      .vgprGranule = 24,
      .maxVgprPerWave = 256,
      .hasAgprs = false,
      .matrixInstrs = {
          {.name = "v_wmma_f32_16x16x16_bf16",
           .builtin = "__builtin_amdgcn_wmma_f32_16x16x16_bf16_w32",
           .family = F::WMMA,
           .m = 16, .n = 16, .k = 16,
           .aType = E::BF16, .accType = E::F32,
           .kPerLane = 16, .bPerLane = 16, .accPerLane = 8, .kRun = 16,
           .cycles = 32, .waveSize = 32,
           .lanes = &kWmmaLanes,
           .atom = "Wmma16x16x16",
           .emuOp = 5},  // TL_EMU_WMMA_F32_16X16X16_BF16_W32
          {.name = "v_wmma_f32_16x16x16_f16",
           .builtin = "__builtin_amdgcn_wmma_f32_16x16x16_f16_w32",
           .family = F::WMMA,
           .m = 16, .n = 16, .k = 16,
           .aType = E::F16, .accType = E::F32,
           .kPerLane = 16, .bPerLane = 16, .accPerLane = 8, .kRun = 16,
           .cycles = 32, .waveSize = 32,
           .lanes = &kWmmaLanes,
           .atom = "Wmma16x16x16",
           .emuOp = 4},  // TL_EMU_WMMA_F32_16X16X16_F16_W32
      },
      .bufferRsrcFlags = 0x31004000u,
  });

  // sm_90a: NVIDIA H100 / H200 (Hopper), docs/hardware.md "NVIDIA Hopper".
  // Warps of 32; 227 KiB of shared memory per block (228 KiB per SM), 32
  // banks of 4 bytes; 64 Ki registers per SM over 4 sub-partitions (512 per
  // lane each, allocated per warp in granules of 8 per lane), at most 255 per
  // thread; 64 warps per SM (16 per sub-partition). mma.sync m16n8k16 (bf16,
  // f16 -> f32); issue cycles per warp instruction: 16x8x16 MACs at 1024
  // dense bf16 FMA per SM-clock over 4 sub-partitions = 8 cycles.
  ts.push_back(TargetInfo{
      .arch = "sm_90a",
      .marketing = "H100 / H200 (Hopper)",
      .vendor = Vendor::NVIDIA,
      .waveSize = 32,
      .ldsBytesPerWorkgroup = 232448,
      .ldsBytesPerCU = 233472,
      .ldsBanks = 32,
      .maxWavesPerSIMD = 16,
      .vgprFile = 512,
      .vgprGranule = 8,
      .maxVgprPerWave = 255,
      .hasAgprs = false,
      // Registers besides accumulators and prefetched tiles: the default
      // 4097^3 GEMM (wgmma, operands in shared memory) uses 54 of them.
      .reservedVgprs = 96,
      .matrixInstrs = {
          {.name = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
           .builtin = "mma_m16n8k16_bf16",
           .family = F::MMA,
           .m = 16, .n = 8, .k = 16,
           .aType = E::BF16, .accType = E::F32,
           .kPerLane = 8, .bPerLane = 4, .accPerLane = 4, .kRun = 2,
           .cycles = 8, .waveSize = 32,
           .lanes = &kMmaLanes,
           .atom = "Mma16x8x16",
           .emuOp = 10},  // TL_EMU_MMA_M16N8K16_BF16
          {.name = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
           .builtin = "mma_m16n8k16_f16",
           .family = F::MMA,
           .m = 16, .n = 8, .k = 16,
           .aType = E::F16, .accType = E::F32,
           .kPerLane = 8, .bPerLane = 4, .accPerLane = 4, .kRun = 2,
           .cycles = 8, .waveSize = 32,
           .lanes = &kMmaLanes,
           .atom = "Mma16x8x16",
           .emuOp = 11},  // TL_EMU_MMA_M16N8K16_F16
          // mma.sync m16n8k32 with OCP fp8 operands (e4m3, e5m2 -> f32): 4
          // 8-bit elements per operand register; the same MACs per cycle
          // count in bytes as m16n8k16 bf16 at twice the k, so twice the
          // FLOP rate: 8 cycles.
          {.name = "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
           .builtin = "mma_m16n8k32_e4m3",
           .family = F::MMA,
           .m = 16, .n = 8, .k = 32,
           .aType = E::FP8E4M3FN, .accType = E::F32,
           .kPerLane = 16, .bPerLane = 8, .accPerLane = 4, .kRun = 4,
           .cycles = 8, .waveSize = 32,
           .lanes = &kMmaK32Lanes,
           .atom = "Mma16x8x32",
           .emuOp = 12,  // TL_EMU_MMA_M16N8K32_E4M3
           .ptxVersion = 84},  // PTX ISA 8.4: mma with .e4m3/.e5m2
          {.name = "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32",
           .builtin = "mma_m16n8k32_e5m2",
           .family = F::MMA,
           .m = 16, .n = 8, .k = 32,
           .aType = E::FP8E5M2, .accType = E::F32,
           .kPerLane = 16, .bPerLane = 8, .accPerLane = 4, .kRun = 4,
           .cycles = 8, .waveSize = 32,
           .lanes = &kMmaK32Lanes,
           .atom = "Mma16x8x32",
           .emuOp = 13,  // TL_EMU_MMA_M16N8K32_E5M2
           .ptxVersion = 84},
          // wgmma.mma_async m64nNk16 (bf16, f16 -> f32), a warpgroup of 4
          // warps, A and B in shared memory (no operand registers), N/2
          // accumulator registers per lane. Cycles: 64 x N x 16 MACs at 2048
          // dense bf16 FMA per SM-clock (NVIDIA's H100 SXM figure, 989
          // TFLOP/s at 1.83 GHz over 132 SMs; mma.sync above reaches half of
          // that) = N / 2. After the mma.sync entries: selection takes them
          // first unless a warpgroup instruction is asked for.
          {.name = "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
           .builtin = "wgmma_m64k16",
           .family = F::WGMMA,
           .m = 64, .n = 256, .k = 16,
           .aType = E::BF16, .accType = E::F32,
           .kPerLane = 0, .bPerLane = 0, .accPerLane = 128, .kRun = 0,
           .cycles = 128, .waveSize = 32, .waves = 4,
           .lanes = &kWgmmaLanes,
           .atom = "Wgmma64xNx16", .atomTakesN = true, .aRegsPerLane = 8},
          {.name = "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16",
           .builtin = "wgmma_m64k16",
           .family = F::WGMMA,
           .m = 64, .n = 128, .k = 16,
           .aType = E::BF16, .accType = E::F32,
           .kPerLane = 0, .bPerLane = 0, .accPerLane = 64, .kRun = 0,
           .cycles = 64, .waveSize = 32, .waves = 4,
           .lanes = &kWgmmaLanes,
           .atom = "Wgmma64xNx16", .atomTakesN = true, .aRegsPerLane = 8},
          {.name = "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16",
           .builtin = "wgmma_m64k16",
           .family = F::WGMMA,
           .m = 64, .n = 64, .k = 16,
           .aType = E::BF16, .accType = E::F32,
           .kPerLane = 0, .bPerLane = 0, .accPerLane = 32, .kRun = 0,
           .cycles = 32, .waveSize = 32, .waves = 4,
           .lanes = &kWgmmaLanes,
           .atom = "Wgmma64xNx16", .atomTakesN = true, .aRegsPerLane = 8},
          {.name = "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16",
           .builtin = "wgmma_m64k16",
           .family = F::WGMMA,
           .m = 64, .n = 256, .k = 16,
           .aType = E::F16, .accType = E::F32,
           .kPerLane = 0, .bPerLane = 0, .accPerLane = 128, .kRun = 0,
           .cycles = 128, .waveSize = 32, .waves = 4,
           .lanes = &kWgmmaLanes,
           .atom = "Wgmma64xNx16", .atomTakesN = true, .aRegsPerLane = 8},
          {.name = "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16",
           .builtin = "wgmma_m64k16",
           .family = F::WGMMA,
           .m = 64, .n = 128, .k = 16,
           .aType = E::F16, .accType = E::F32,
           .kPerLane = 0, .bPerLane = 0, .accPerLane = 64, .kRun = 0,
           .cycles = 64, .waveSize = 32, .waves = 4,
           .lanes = &kWgmmaLanes,
           .atom = "Wgmma64xNx16", .atomTakesN = true, .aRegsPerLane = 8},
          {.name = "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16",
           .builtin = "wgmma_m64k16",
           .family = F::WGMMA,
           .m = 64, .n = 64, .k = 16,
           .aType = E::F16, .accType = E::F32,
           .kPerLane = 0, .bPerLane = 0, .accPerLane = 32, .kRun = 0,
           .cycles = 32, .waveSize = 32, .waves = 4,
           .lanes = &kWgmmaLanes,
           .atom = "Wgmma64xNx16", .atomTakesN = true, .aRegsPerLane = 8},
          // wgmma.mma_async m64nNk32 with OCP fp8 operands (e4m3, e5m2 -> f32):
          // the same bytes per k step as k16 at 16 bits, twice the MACs per
          // cycle (1979 dense fp8 TFLOP/s on the H100 SXM), so the cycles of
          // the k16 rows. Both operands K-major (kMajorOperandsOnly).
          {.name = "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3",
           .builtin = "wgmma_m64k32",
           .family = F::WGMMA,
           .m = 64, .n = 256, .k = 32,
           .aType = E::FP8E4M3FN, .accType = E::F32,
           .kPerLane = 0, .bPerLane = 0, .accPerLane = 128, .kRun = 0,
           .cycles = 128, .waveSize = 32, .waves = 4,
           .lanes = &kWgmmaLanes,
           .atom = "Wgmma64xNx32", .atomTakesN = true, .kMajorOperandsOnly = true},
          {.name = "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3",
           .builtin = "wgmma_m64k32",
           .family = F::WGMMA,
           .m = 64, .n = 128, .k = 32,
           .aType = E::FP8E4M3FN, .accType = E::F32,
           .kPerLane = 0, .bPerLane = 0, .accPerLane = 64, .kRun = 0,
           .cycles = 64, .waveSize = 32, .waves = 4,
           .lanes = &kWgmmaLanes,
           .atom = "Wgmma64xNx32", .atomTakesN = true, .kMajorOperandsOnly = true},
          {.name = "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3",
           .builtin = "wgmma_m64k32",
           .family = F::WGMMA,
           .m = 64, .n = 64, .k = 32,
           .aType = E::FP8E4M3FN, .accType = E::F32,
           .kPerLane = 0, .bPerLane = 0, .accPerLane = 32, .kRun = 0,
           .cycles = 32, .waveSize = 32, .waves = 4,
           .lanes = &kWgmmaLanes,
           .atom = "Wgmma64xNx32", .atomTakesN = true, .kMajorOperandsOnly = true},
          {.name = "wgmma.mma_async.sync.aligned.m64n256k32.f32.e5m2.e5m2",
           .builtin = "wgmma_m64k32",
           .family = F::WGMMA,
           .m = 64, .n = 256, .k = 32,
           .aType = E::FP8E5M2, .accType = E::F32,
           .kPerLane = 0, .bPerLane = 0, .accPerLane = 128, .kRun = 0,
           .cycles = 128, .waveSize = 32, .waves = 4,
           .lanes = &kWgmmaLanes,
           .atom = "Wgmma64xNx32", .atomTakesN = true, .kMajorOperandsOnly = true},
          {.name = "wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2",
           .builtin = "wgmma_m64k32",
           .family = F::WGMMA,
           .m = 64, .n = 128, .k = 32,
           .aType = E::FP8E5M2, .accType = E::F32,
           .kPerLane = 0, .bPerLane = 0, .accPerLane = 64, .kRun = 0,
           .cycles = 64, .waveSize = 32, .waves = 4,
           .lanes = &kWgmmaLanes,
           .atom = "Wgmma64xNx32", .atomTakesN = true, .kMajorOperandsOnly = true},
          {.name = "wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2",
           .builtin = "wgmma_m64k32",
           .family = F::WGMMA,
           .m = 64, .n = 64, .k = 32,
           .aType = E::FP8E5M2, .accType = E::F32,
           .kPerLane = 0, .bPerLane = 0, .accPerLane = 32, .kRun = 0,
           .cycles = 32, .waveSize = 32, .waves = 4,
           .lanes = &kWgmmaLanes,
           .atom = "Wgmma64xNx32", .atomTakesN = true, .kMajorOperandsOnly = true},
      },
      .bufferRsrcFlags = 0u,
      .asyncCopyBytes = 16,
      .hasTensorCopy = true,
      .fp8Formats = TargetInfo::Fp8Formats::Ocp,
  });
  return ts;
}

static const std::vector<TargetInfo> &targets() {
  static const std::vector<TargetInfo> ts = buildTargets();
  return ts;
}

const std::vector<TargetInfo> &knownTargets() { return targets(); }

const MatrixInstr *findInstrByEmuOp(int emuOp) {
  for (const TargetInfo &t : targets())
    for (const MatrixInstr &mi : t.matrixInstrs)
      if (mi.emuOp >= 0 && mi.emuOp == emuOp)
        return &mi;
  return nullptr;
}

const TargetInfo *lookupTarget(std::string_view arch) {
  for (const TargetInfo &t : targets())
    if (t.arch == arch)
      return &t;
  return nullptr;
}

std::string knownTargetsList() {
  std::string s;
  for (const TargetInfo &t : targets())
    s += (s.empty() ? "" : ", ") + t.arch;
  return s;
}

} // namespace tilec
