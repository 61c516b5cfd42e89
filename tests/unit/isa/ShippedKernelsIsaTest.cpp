// Every shipped kernel x target x element type (x output type, x part for
// the kernels that compile several) at its default tiles, compiled by
// tilec::compile and checked at the ISA level:
//   - no scratch (report and .private_segment_fixed_size): a kernel that
//     needs scratch keeps a register tile in memory;
//   - the ELF header and NT_AMDGPU_METADATA note agree with the launch:
//     e_flags of the target, .name, .wavefront_size, .max_flat_workgroup_size
//     (the workgroup size), the kernel arguments' order, sizes and offsets
//     (pointer 8 bytes, int/float 4, each aligned to its size) and
//     .kernarg_segment_size;
//   - the checks of lib/JIT/IsaCheck.h (LDS barriers, buffer descriptors,
//     matrix operands) on the disassembled code, and for the GEMM, whose A
//     and B are LDS tiles, that every matrix operand comes from LDS reads.

#include "JIT/IsaCheck.h"
#include "JIT/JIT.h"

#include "Registry.h"
#include "tilec/tilec.hpp"

#include "llvm/BinaryFormat/ELF.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>

using namespace tilec;
using namespace tilec::jit;

namespace {

struct Variant {
  std::string kernel;
  std::string arch;
  kernels::KernelParams params;

  std::string name() const {
    std::string n = kernel + "_" + arch;
    for (const auto &[key, value] : params)
      n += "_" + key + "_" + value;
    return n;
  }
};

/// One axis of the sweep: a parameter and the values it takes.
struct Axis {
  std::string param;
  std::vector<std::string> values;
};

/// The axes swept per shipped kernel: its element types, output types and
/// parts (the kernels a multi-kernel problem launches). Tiles and sizes keep
/// their defaults. A shipped kernel missing here fails the test below.
const std::map<std::string, std::vector<Axis>> &sweptAxes() {
  static const std::map<std::string, std::vector<Axis>> axes = {
      {"gemm", {{"dtype", {"bf16", "f16", "fp8", "bf8", "e4m3", "e5m2"}}, {"out", {"f32", "bf16"}}, {"strided", {"0", "1"}}}},
      {"attention", {{"dtype", {"bf16", "f16"}}, {"head_dim", {"80", "128", "256"}}}},
      {"attention_bwd", {{"dtype", {"bf16", "f16"}}, {"part", {"fwd", "dq", "dkdv"}}}},
      // splits > 1 gives the split-KV attend kernel and the combine kernel.
      {"paged_decode", {{"dtype", {"bf16", "f16"}}, {"splits", {"1", "4"}}, {"part", {"attend", "combine"}}}},
      {"mla_decode", {{"kv_dtype", {"bf16", "fp8"}}, {"splits", {"1", "4"}}, {"part", {"attend", "combine"}}}},
      {"moe", {{"dtype", {"bf16", "f16"}}, {"part", {"gate", "align", "gate_up", "down", "combine"}}}},
      {"moe_gate", {{"dtype", {"bf16", "f16", "f32"}}}},
      {"moe_align", {}},
      {"moe_experts", {{"dtype", {"bf16", "f16"}}, {"part", {"gate_up", "down", "combine"}}}},
      {"rms_norm", {{"dtype", {"bf16", "f16", "f32"}}, {"residual", {"0", "1"}}, {"fp8_out", {"0", "1"}},
                    {"fp8_scale", {"static", "token", "group"}}}},
      {"silu_and_mul", {{"dtype", {"bf16", "f16", "f32"}}, {"fp8_out", {"0", "1"}}}},
      {"softmax", {{"dtype", {"bf16", "f16", "f32"}}}},
      {"rope", {{"dtype", {"bf16", "f16", "f32"}}, {"style", {"neox", "gptj"}}}},
  };
  return axes;
}

/// fp8 and bf8 (e4m3fnuz, e5m2fnuz) operands and caches are gfx942's only;
/// the OCP e4m3 and e5m2 operands sm_90a's only.
bool targetMultiplies(const std::string &arch, const kernels::KernelParams &params) {
  for (const char *key : {"dtype", "kv_dtype"}) {
    auto dtype = params.find(key);
    if (arch != "gfx942" && dtype != params.end() && (dtype->second == "fp8" || dtype->second == "bf8"))
      return false;
    if (arch != "sm_90a" && dtype != params.end() && (dtype->second == "e4m3" || dtype->second == "e5m2"))
      return false;
  }
  return true;
}

std::vector<Variant> allVariants() {
  std::vector<Variant> out;
  for (const TargetInfo &target : knownTargets()) {
    for (const auto &[kernel, axes] : sweptAxes()) {
      std::vector<kernels::KernelParams> combos = {{}};
      for (const Axis &axis : axes) {
        std::vector<kernels::KernelParams> next;
        for (const kernels::KernelParams &c : combos)
          for (const std::string &v : axis.values) {
            kernels::KernelParams p = c;
            p[axis.param] = v;
            next.push_back(p);
          }
        combos = next;
      }
      for (const kernels::KernelParams &p : combos) {
        // The combine kernel exists with split-KV only.
        if ((kernel == "paged_decode" || kernel == "mla_decode") && p.at("splits") == "1" && p.at("part") == "combine")
          continue;
        // Computed scales belong to an fp8 output.
        if (kernel == "rms_norm" && p.at("fp8_out") == "0" && p.at("fp8_scale") != "static")
          continue;
        if (targetMultiplies(target.arch, p))
          out.push_back({kernel, target.arch, p});
      }
    }
  }
  return out;
}

TEST(IsaSweep, CoversEveryShippedKernel) {
  for (const kernels::KernelInfo &k : kernels::shippedKernels())
    EXPECT_TRUE(sweptAxes().count(k.name)) << k.name << " is shipped but not in the ISA sweep";
}

/// e_flags of a code object for `arch`: the machine, and for the CDNA targets
/// xnack and sramecc "any" (code that runs with either setting), as clang
/// writes them by default (code object v4+ feature bits).
unsigned expectedElfFlags(const std::string &arch) {
  if (arch == "gfx942")
    return llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX942 | llvm::ELF::EF_AMDGPU_FEATURE_XNACK_ANY_V4 |
           llvm::ELF::EF_AMDGPU_FEATURE_SRAMECC_ANY_V4;
  if (arch == "gfx90a")
    return llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A | llvm::ELF::EF_AMDGPU_FEATURE_XNACK_ANY_V4 |
           llvm::ELF::EF_AMDGPU_FEATURE_SRAMECC_ANY_V4;
  if (arch == "gfx1151")  // RDNA has neither setting
    return llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1151;
  ADD_FAILURE() << "no e_flags known for " << arch;
  return 0;
}

/// The kernel argument a HIP parameter of C type `type` becomes: a pointer is
/// a global buffer of 8 bytes, int and float are 4 bytes by value.
KernelNote::Arg expectedArg(const std::string &type) {
  if (!type.empty() && type.back() == '*')
    return {0, 8, "global_buffer"};
  EXPECT_TRUE(type == "int" || type == "float") << "unexpected HIP parameter type " << type;
  return {0, 4, "by_value"};
}

class ShippedKernelIsa : public testing::TestWithParam<Variant> {};

TEST_P(ShippedKernelIsa, ChecksPass) {
  const Variant &v = GetParam();
  const kernels::KernelInfo *info = kernels::findKernel(v.kernel);
  ASSERT_NE(info, nullptr);
  Result<Kernel> kernel = info->build(kernels::withTargetDefaults(*info, v.params, v.arch));
  ASSERT_TRUE(kernel.ok()) << kernel.error();
  CompileOptions options;
  options.arch = v.arch;
  Result<CompiledKernel> compiled = compile(*kernel, options);
  ASSERT_TRUE(compiled.ok()) << compiled.error();
  const CompiledKernel &ck = *compiled;
  const TargetInfo &target = *lookupTarget(v.arch);

  EXPECT_EQ(ck.report.scratchBytes, 0) << ck.name << " uses scratch";
  if (target.vendor == Vendor::NVIDIA) {
    // A cubin has no AMDGPU notes; its report comes from .nv.info and the PTX.
    EXPECT_EQ(ck.report.vgprSpills, 0) << ck.name;
    EXPECT_EQ(ck.assembly.find(".local"), std::string::npos) << ck.name << " uses local memory";
    EXPECT_LE(ck.report.ldsBytes, target.ldsBytesPerWorkgroup) << ck.name;
    // A launch asks for the shared memory the kernel addresses: the tiles
    // tilec-allocate-lds placed (tile.lds_bytes of the tile IR) and the
    // emitter's barriers after them, within the report's total, which adds
    // the static section ptxas reserves.
    const size_t at = ck.tileIR.find("tile.lds_bytes = ");
    ASSERT_NE(at, std::string::npos) << ck.name;
    EXPECT_GE(ck.dynamicLdsBytes, std::atoll(ck.tileIR.c_str() + at + 17)) << ck.name;
    EXPECT_LE(ck.dynamicLdsBytes, ck.report.ldsBytes) << ck.name;
    EXPECT_GT(ck.report.occupancy, 0) << ck.name;
    const auto part = v.params.find("part");
    const bool reduction = part != v.params.end() && part->second == "combine";
    if ((v.kernel == "gemm" || v.kernel.rfind("attention", 0) == 0 || v.kernel == "paged_decode" ||
         v.kernel == "mla_decode") && !reduction)
      EXPECT_GT(ck.report.matrixInstructions, 0) << ck.name << " has no mma.sync";
    return;
  }

  EXPECT_EQ(ck.dynamicLdsBytes, 0) << ck.name << ": AMD code objects declare their LDS";
  llvm::Expected<KernelNote> note = readKernelNote(ck.codeObject);
  ASSERT_TRUE(!!note) << llvm::toString(note.takeError());
  EXPECT_EQ(note->eFlags, expectedElfFlags(v.arch));
  EXPECT_EQ(note->name, ck.name);
  EXPECT_EQ(note->wavefrontSize, target.waveSize);
  EXPECT_EQ(ck.waveSize, target.waveSize);
  EXPECT_EQ(note->maxFlatWorkgroupSize, int64_t(ck.numWaves) * ck.waveSize);
  EXPECT_EQ(note->privateSegmentFixedSize, 0);
  ASSERT_EQ(note->args.size(), ck.paramTypes.size());
  int64_t end = 0;
  for (size_t i = 0; i < ck.paramTypes.size(); ++i) {
    KernelNote::Arg want = expectedArg(ck.paramTypes[i]);
    want.offset = (end + want.size - 1) / want.size * want.size;
    end = want.offset + want.size;
    EXPECT_EQ(note->args[i].valueKind, want.valueKind) << "argument " << i << ": " << ck.paramTypes[i];
    EXPECT_EQ(note->args[i].size, want.size) << "argument " << i << ": " << ck.paramTypes[i];
    EXPECT_EQ(note->args[i].offset, want.offset) << "argument " << i << ": " << ck.paramTypes[i];
  }
  // The segment holds the explicit arguments and nothing more (the kernels
  // read no hidden arguments).
  EXPECT_EQ(note->kernargSegmentSize, end);

  llvm::Expected<IsaProgram> program = decodeProgram(ck.codeObject, target);
  ASSERT_TRUE(!!program) << llvm::toString(program.takeError());
  EXPECT_EQ(formatViolations(checkIsa(*program, target)), "") << ck.name;
  // The GEMM multiplies LDS tiles only: every operand comes from ds_reads.
  if (v.kernel == "gemm")
    EXPECT_EQ(formatViolations(checkMatrixOperandsFromLds(*program)), "") << ck.name;
}

INSTANTIATE_TEST_SUITE_P(Default, ShippedKernelIsa, testing::ValuesIn(allVariants()),
                         [](const testing::TestParamInfo<Variant> &info) { return info.param.name(); });

} // namespace
