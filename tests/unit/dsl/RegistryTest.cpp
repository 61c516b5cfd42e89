// The shipped-kernel registry: every kernel builds with its defaults; unknown
// parameters and bad values give errors that list what is valid.
#include "Registry.h"
#include "TileIR.h"

#include <gtest/gtest.h>

using namespace tilec;
using kernels::buildKernel;

namespace {

bool contains(const std::string &s, const std::string &needle) {
  return s.find(needle) != std::string::npos;
}

TEST(Registry, EveryShippedKernelBuildsWithItsDefaultsAndVerifies) {
  ASSERT_FALSE(kernels::shippedKernels().empty());
  for (const kernels::KernelInfo &info : kernels::shippedKernels()) {
    SCOPED_TRACE(info.name);
    EXPECT_FALSE(info.summary.empty());
    for (const kernels::KernelParam &p : info.params)
      EXPECT_FALSE(p.help.empty()) << p.name;
    Result<Kernel> k = info.build({});
    ASSERT_TRUE(k.ok()) << k.error();
    EXPECT_TRUE(test::verifies(*k));
  }
}

TEST(Registry, EveryParameterDeclaresItsValuesAndItsDefaultIsOneOfThem) {
  for (const kernels::KernelInfo &info : kernels::shippedKernels())
    for (const kernels::KernelParam &p : info.params) {
      SCOPED_TRACE(info.name + " " + p.name);
      using K = kernels::ParamSpec::Kind;
      if (p.spec.kind == K::Integer)
        EXPECT_LE(p.spec.min, p.spec.max);
      if (p.spec.kind == K::Choice)
        EXPECT_FALSE(p.spec.keywords.empty());
      if (p.spec.kind == K::DType)
        EXPECT_FALSE(p.spec.dtypes.empty());
      EXPECT_EQ(p.spec.check(p.defaultValue), "");
    }
}

TEST(Registry, TargetDefaultsAreAllowedValues) {
  for (const kernels::KernelInfo &info : kernels::shippedKernels())
    for (const TargetInfo &t : knownTargets()) {
      kernels::KernelParams given = kernels::withTargetDefaults(info, {}, t.arch);
      for (const kernels::KernelParam &p : info.params)
        if (auto it = given.find(p.name); it != given.end())
          EXPECT_EQ(p.spec.check(it->second), "") << info.name << " on " << t.arch;
    }
}

TEST(Registry, ParameterSchemaDescribesAndChecksValues) {
  using kernels::ParamSpec;
  EXPECT_EQ(ParamSpec::integer(1, 8).check("9"), "must be an integer in [1, 8], got '9'");
  EXPECT_EQ(ParamSpec::integer(1, 8).check("8"), "");
  EXPECT_EQ(ParamSpec::integer(1, 8).check("3x"), "must be an integer in [1, 8], got '3x'");
  EXPECT_EQ(ParamSpec::integer(1, 8, {"seq_q"}).check("seq_q"), "");
  EXPECT_EQ(ParamSpec::integer(1, 8, {"seq_q"}).describe(), "an integer in [1, 8] or seq_q");
  EXPECT_EQ(ParamSpec::real({"auto"}).check("auto"), "");
  EXPECT_EQ(ParamSpec::real().check("inf"), "must be a finite real number, got 'inf'");
  EXPECT_EQ(ParamSpec::real().check("0.125"), "");
  EXPECT_EQ(ParamSpec::oneOf({"nn", "nt"}).check("tn"), "must be one of nn, nt, got 'tn'");
  EXPECT_EQ(ParamSpec::dtype({DType::bf16, DType::fp8e4m3fnuz}).check("fp8"), "");
  EXPECT_EQ(ParamSpec::dtype({DType::bf16, DType::fp8e4m3fnuz}).check("f16"),
            "must be one of bf16, fp8 (fp8e4m3fnuz), got 'f16'");
}

TEST(Registry, ValuesAreCheckedEvenWhereTheBuildDoesNotReadThem) {
  // scale_a is read by --run's problem only; a bad value is still an error.
  Result<Kernel> k = buildKernel("gemm", {{"scale_a", "x"}});
  ASSERT_FALSE(k.ok());
  EXPECT_TRUE(contains(k.error(), "kernel 'gemm': parameter 'scale_a' must be a finite real number, got 'x'"))
      << k.error();
}

TEST(Registry, FindsKernelsByName) {
  ASSERT_NE(kernels::findKernel("gemm"), nullptr);
  EXPECT_EQ(kernels::findKernel("gemm")->name, "gemm");
  EXPECT_EQ(kernels::findKernel("nope"), nullptr);
}

TEST(Registry, GemmParametersAndDefaults) {
  const kernels::KernelInfo *gemm = kernels::findKernel("gemm");
  ASSERT_NE(gemm, nullptr);
  std::map<std::string, std::string> defaults;
  for (const kernels::KernelParam &p : gemm->params)
    defaults[p.name] = p.defaultValue;
  EXPECT_EQ(defaults, (std::map<std::string, std::string>{{"M", "4096"},
                                                          {"N", "4096"},
                                                          {"K", "4096"},
                                                          {"dtype", "bf16"},
                                                          {"out", "f32"},
                                                          {"block_m", "128"},
                                                          {"block_n", "128"},
                                                          {"block_k", "32"},
                                                          {"waves", "4"},
                                                          {"stages", "2"},
                                                          {"lds_layout", "auto"},
                                                          {"group_m", "1"},
                                                          {"xcds", "1"},
                                                          {"schedule", "none"},
                                                          {"instr", "auto"},
                                                          {"scaling", "tensor"},
                                                          {"scale_a", "1"},
                                                          {"scale_b", "1"},
                                                          {"layout", "nn"},
                                                          {"lda", "tight"},
                                                          {"ldb", "tight"},
                                                          {"ldc", "tight"},
                                                          {"batch", "1"},
                                                          {"batch_stride_a", "tight"},
                                                          {"batch_stride_b", "tight"},
                                                          {"batch_stride_c", "tight"},
                                                          {"strided", "auto"},
                                                          {"divisibility", "auto"},
                                                          {"split_k", "1"},
                                                          {"part", "partial"},
                                                          {"b_lds", "nk"}}));
}

TEST(Registry, UnknownKernelListsTheShippedOnes) {
  Result<Kernel> k = buildKernel("gemmm");
  ASSERT_FALSE(k.ok());
  EXPECT_TRUE(contains(k.error(), "unknown kernel 'gemmm'")) << k.error();
  EXPECT_TRUE(contains(k.error(), "gemm")) << k.error();
}

TEST(Registry, UnknownParameterListsTheValidOnes) {
  Result<Kernel> k = buildKernel("gemm", {{"blockm", "64"}});
  ASSERT_FALSE(k.ok());
  EXPECT_TRUE(contains(k.error(), "kernel 'gemm': unknown parameter 'blockm'")) << k.error();
  EXPECT_TRUE(contains(k.error(), "valid parameters: M, N, K, dtype, out, layout, lda, ldb, ldc, batch, batch_stride_a, "
                                  "batch_stride_b, batch_stride_c, strided, divisibility, scaling, scale_a, scale_b, block_m, "
                                  "block_n, block_k, waves, stages, group_m, xcds, lds_layout, instr, split_k, part, b_lds, "
                                  "schedule"))
      << k.error();
}

TEST(Registry, NonIntegerSizeIsRejected) {
  for (const char *bad : {"abc", "12x", "", "0", "-5", "99999999999999999999"}) {
    Result<Kernel> k = buildKernel("gemm", {{"M", bad}});
    ASSERT_FALSE(k.ok()) << bad;
    EXPECT_TRUE(contains(k.error(), "parameter 'M' must be an integer in [1, 2147483647], got '" +
                                        std::string(bad) + "'"))
        << k.error();
  }
}

TEST(Registry, BadDtypeListsTheValidOnes) {
  Result<Kernel> k = buildKernel("gemm", {{"dtype", "xyz"}});
  ASSERT_FALSE(k.ok());
  EXPECT_TRUE(contains(k.error(), "parameter 'dtype' must be one of bf16, f16, fp8 (fp8e4m3fnuz), bf8 (fp8e5m2fnuz), e4m3, e5m2, got 'xyz'")) << k.error();

  k = buildKernel("gemm", {{"out", "f16"}});
  ASSERT_FALSE(k.ok());
  EXPECT_TRUE(contains(k.error(), "parameter 'out' must be one of f32, bf16, got 'f16'")) << k.error();
}

TEST(Registry, OutOfRangeConfigurationIsRejected) {
  Result<Kernel> k = buildKernel("gemm", {{"waves", "17"}});
  ASSERT_FALSE(k.ok());
  EXPECT_TRUE(contains(k.error(), "parameter 'waves' must be an integer in [1, 16], got '17'")) << k.error();
  k = buildKernel("gemm", {{"stages", "0"}});
  ASSERT_FALSE(k.ok());
  EXPECT_TRUE(contains(k.error(), "parameter 'stages'")) << k.error();
}

} // namespace
