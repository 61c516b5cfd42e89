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
  case ElemType::I8: return "i8";
  case ElemType::I32: return "i32";
  }
  return "?";
}

std::optional<ElemType> parseElemType(std::string_view s) {
  for (ElemType t : {ElemType::F32, ElemType::F16, ElemType::BF16, ElemType::FP8E4M3FNUZ,
                     ElemType::FP8E5M2FNUZ, ElemType::I8, ElemType::I32})
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
    long wgs = ldsBytesPerCU / ldsBytes;
    int simds = 4;
    long ldsWaves = wgs * wavesPerWorkgroup / simds;
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

// The matrix instructions' rows: mnemonic, clang builtin, family, m, n, k,
// A/B type, accumulator type, A elements per lane, accumulator elements per
// lane, issue cycles (MatrixInstr's fields in order).
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
          {"v_mfma_f32_32x32x8_bf16", "__builtin_amdgcn_mfma_f32_32x32x8bf16_1k", F::MFMA, 32, 32, 8, E::BF16, E::F32, 4, 16, 32},
          {"v_mfma_f32_16x16x16_bf16", "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k", F::MFMA, 16, 16, 16, E::BF16, E::F32, 4, 4, 16},
          {"v_mfma_f32_32x32x8_f16", "__builtin_amdgcn_mfma_f32_32x32x8f16", F::MFMA, 32, 32, 8, E::F16, E::F32, 4, 16, 32},
          {"v_mfma_f32_16x16x16_f16", "__builtin_amdgcn_mfma_f32_16x16x16f16", F::MFMA, 16, 16, 16, E::F16, E::F32, 4, 4, 16},
          {"v_mfma_f32_32x32x16_fp8_fp8", "__builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8", F::MFMA, 32, 32, 16, E::FP8E4M3FNUZ, E::F32, 8, 16, 32},
          {"v_mfma_f32_16x16x32_fp8_fp8", "__builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8", F::MFMA, 16, 16, 32, E::FP8E4M3FNUZ, E::F32, 8, 4, 16},
          // bf8 = e5m2fnuz (section 8): the fp8 instructions' lane layout and cycles (section 1).
          {"v_mfma_f32_32x32x16_bf8_bf8", "__builtin_amdgcn_mfma_f32_32x32x16_bf8_bf8", F::MFMA, 32, 32, 16, E::FP8E5M2FNUZ, E::F32, 8, 16, 32},
          {"v_mfma_f32_16x16x32_bf8_bf8", "__builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8", F::MFMA, 16, 16, 32, E::FP8E5M2FNUZ, E::F32, 8, 4, 16},
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
          {"v_mfma_f32_32x32x8bf16_1k", "__builtin_amdgcn_mfma_f32_32x32x8bf16_1k", F::MFMA, 32, 32, 8, E::BF16, E::F32, 4, 16, 64},
          {"v_mfma_f32_16x16x16bf16_1k", "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k", F::MFMA, 16, 16, 16, E::BF16, E::F32, 4, 4, 32},
          {"v_mfma_f32_32x32x8f16", "__builtin_amdgcn_mfma_f32_32x32x8f16", F::MFMA, 32, 32, 8, E::F16, E::F32, 4, 16, 64},
          {"v_mfma_f32_16x16x16f16", "__builtin_amdgcn_mfma_f32_16x16x16f16", F::MFMA, 16, 16, 16, E::F16, E::F32, 4, 4, 32},
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
          {"v_wmma_f32_16x16x16_bf16", "__builtin_amdgcn_wmma_f32_16x16x16_bf16_w32", F::WMMA, 16, 16, 16, E::BF16, E::F32, 16, 8, 32},
          {"v_wmma_f32_16x16x16_f16", "__builtin_amdgcn_wmma_f32_16x16x16_f16_w32", F::WMMA, 16, 16, 16, E::F16, E::F32, 16, 8, 32},
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
      .matrixInstrs = {
          {"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "mma_m16n8k16_bf16", F::MMA, 16, 8, 16, E::BF16, E::F32, 8, 4, 8},
          {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "mma_m16n8k16_f16", F::MMA, 16, 8, 16, E::F16, E::F32, 8, 4, 8},
          // wgmma.mma_async m64nNk16 (bf16, f16 -> f32), a warpgroup of 4
          // warps, A and B in shared memory (no operand registers), N/2
          // accumulator registers per lane. Cycles: 64 x N x 16 MACs at 2048
          // dense bf16 FMA per SM-clock (NVIDIA's H100 SXM figure, 989
          // TFLOP/s at 1.83 GHz over 132 SMs; mma.sync above reaches half of
          // that) = N / 2. After the mma.sync entries: selection takes them
          // first unless a warpgroup instruction is asked for.
          {"wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", "wgmma_m64k16", F::WGMMA, 64, 256, 16, E::BF16, E::F32, 0, 128, 128, 4},
          {"wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", "wgmma_m64k16", F::WGMMA, 64, 128, 16, E::BF16, E::F32, 0, 64, 64, 4},
          {"wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", "wgmma_m64k16", F::WGMMA, 64, 64, 16, E::BF16, E::F32, 0, 32, 32, 4},
          {"wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", "wgmma_m64k16", F::WGMMA, 64, 256, 16, E::F16, E::F32, 0, 128, 128, 4},
          {"wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", "wgmma_m64k16", F::WGMMA, 64, 128, 16, E::F16, E::F32, 0, 64, 64, 4},
          {"wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", "wgmma_m64k16", F::WGMMA, 64, 64, 16, E::F16, E::F32, 0, 32, 32, 4},
      },
      .bufferRsrcFlags = 0u,
      .asyncCopyBytes = 16,
  });
  return ts;
}

static const std::vector<TargetInfo> &targets() {
  static const std::vector<TargetInfo> ts = buildTargets();
  return ts;
}

const std::vector<TargetInfo> &knownTargets() { return targets(); }

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
