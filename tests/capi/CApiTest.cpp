// The compiler's C ABI (include/tilec/tilec.h): every bad input gets a
// non-zero status and a message that names the problem, never a crash; the
// manifest entry it returns reads back as a bundle manifest's; errors are
// per thread.
#include "tilec/tilec.h"

#include "Rt/Manifest.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace {

std::string readText(const std::string &path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Compiles shipped kernel `kernel` with one parameter (or none) and returns
/// the status; frees what it got.
tilec_compile_status compileWith(const char *kernel, const char *key, const char *value,
                                 const tilec_compile_options *opts = nullptr) {
  tilec_compiled *k = nullptr;
  const char *keys[] = {key}, *values[] = {value};
  tilec_compile_status s = tilec_compile_kernel(kernel, keys, values, key ? 1 : 0, opts, &k);
  EXPECT_EQ(k == nullptr, s != TILEC_COMPILE_OK);
  tilec_compiled_free(k);
  return s;
}

std::string lastError() { return tilec_compile_last_error(); }

TEST(CApi, NullOutAndKernel) {
  EXPECT_EQ(tilec_compile_kernel("gemm", nullptr, nullptr, 0, nullptr, nullptr), TILEC_COMPILE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("out is NULL"), std::string::npos) << lastError();
  tilec_compiled *k = reinterpret_cast<tilec_compiled *>(0x1);
  EXPECT_EQ(tilec_compile_kernel(nullptr, nullptr, nullptr, 0, nullptr, &k), TILEC_COMPILE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(k, nullptr);  // *out is cleared on failure
  EXPECT_EQ(tilec_compile_kernel("", nullptr, nullptr, 0, nullptr, &k), TILEC_COMPILE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tilec_compile_kernel("gemm", nullptr, nullptr, 2, nullptr, &k), TILEC_COMPILE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("2 parameters but keys or values is NULL"), std::string::npos) << lastError();
}

TEST(CApi, UnknownKernelListsTheShippedOnes) {
  EXPECT_EQ(compileWith("gemmm", nullptr, nullptr), TILEC_COMPILE_ERROR_UNKNOWN_KERNEL);
  EXPECT_NE(lastError().find("unknown kernel 'gemmm'"), std::string::npos) << lastError();
  EXPECT_NE(lastError().find("paged_decode"), std::string::npos) << lastError();
}

TEST(CApi, BadParameters) {
  EXPECT_EQ(compileWith("gemm", "block_q", "64"), TILEC_COMPILE_ERROR_PARAM);
  EXPECT_NE(lastError().find("unknown parameter 'block_q'"), std::string::npos) << lastError();
  EXPECT_NE(lastError().find("block_m"), std::string::npos) << "lists the valid ones: " << lastError();
  EXPECT_EQ(compileWith("gemm", "block_m", "sixty-four"), TILEC_COMPILE_ERROR_PARAM);
  EXPECT_NE(lastError().find("block_m"), std::string::npos) << lastError();
  EXPECT_EQ(compileWith("gemm", "", "1"), TILEC_COMPILE_ERROR_PARAM);
  EXPECT_NE(lastError().find("empty name"), std::string::npos) << lastError();
  EXPECT_EQ(compileWith("gemm", "dtype", "f64"), TILEC_COMPILE_ERROR_PARAM);
  EXPECT_NE(lastError().find("dtype"), std::string::npos) << lastError();

  tilec_compiled *k = nullptr;
  const char *keys[] = {"M", "M"}, *values[] = {"64", "128"};
  EXPECT_EQ(tilec_compile_kernel("gemm", keys, values, 2, nullptr, &k), TILEC_COMPILE_ERROR_PARAM);
  EXPECT_NE(lastError().find("'M' given twice"), std::string::npos) << lastError();
  const char *nullKey[] = {nullptr};
  EXPECT_EQ(tilec_compile_kernel("gemm", nullKey, values, 1, nullptr, &k), TILEC_COMPILE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("NULL key or value"), std::string::npos) << lastError();
}

TEST(CApi, BadOptions) {
  tilec_compile_options opts = TILEC_COMPILE_OPTIONS_INIT;
  opts.target = "gfx9000";
  EXPECT_EQ(compileWith("gemm", nullptr, nullptr, &opts), TILEC_COMPILE_ERROR_UNKNOWN_TARGET);
  EXPECT_NE(lastError().find("unknown target 'gfx9000'"), std::string::npos) << lastError();
  EXPECT_NE(lastError().find("gfx942"), std::string::npos) << "lists the known targets: " << lastError();

  opts = TILEC_COMPILE_OPTIONS_INIT;
  opts.jit = "nvcc";
  EXPECT_EQ(compileWith("gemm", nullptr, nullptr, &opts), TILEC_COMPILE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("unknown jit 'nvcc'"), std::string::npos) << lastError();

  // A caller built against another layout of the options.
  opts = TILEC_COMPILE_OPTIONS_INIT;
  opts.struct_size = sizeof(opts) + 8;
  EXPECT_EQ(compileWith("gemm", nullptr, nullptr, &opts), TILEC_COMPILE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("struct_size"), std::string::npos) << lastError();
  opts.struct_size = 0;
  EXPECT_EQ(compileWith("gemm", nullptr, nullptr, &opts), TILEC_COMPILE_ERROR_INVALID_ARGUMENT);
}

TEST(CApi, BadTileIR) {
  tilec_compiled *k = reinterpret_cast<tilec_compiled *>(0x1);
  EXPECT_EQ(tilec_compile_tile_ir(nullptr, 10, nullptr, nullptr, &k), TILEC_COMPILE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(k, nullptr);
  EXPECT_EQ(tilec_compile_tile_ir("x", 0, nullptr, nullptr, &k), TILEC_COMPILE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tilec_compile_tile_ir("x", 1, nullptr, nullptr, nullptr), TILEC_COMPILE_ERROR_INVALID_ARGUMENT);

  // An op the tile dialect does not have, on line 4: the message has the
  // buffer name and the line.
  const std::string bad = readText(TILEC_CAPI_INPUTS "/tile-invalid-syntax.mlir");
  ASSERT_FALSE(bad.empty());
  EXPECT_EQ(tilec_compile_tile_ir(bad.data(), bad.size(), "bad.mlir", nullptr, &k), TILEC_COMPILE_ERROR_COMPILE);
  EXPECT_EQ(k, nullptr);
  EXPECT_NE(lastError().find("bad.mlir:4"), std::string::npos) << lastError();

  // Not NUL-terminated: only `size` bytes are read (the rest would be valid).
  const std::string good = readText(TILEC_CAPI_INPUTS "/tile-gemm-bf16-64x64x32.mlir");
  EXPECT_EQ(tilec_compile_tile_ir(good.data(), good.size() / 2, "half.mlir", nullptr, &k),
            TILEC_COMPILE_ERROR_COMPILE);
  EXPECT_NE(lastError().find("half.mlir"), std::string::npos) << lastError();
}

TEST(CApi, NullCompiledGetters) {
  size_t size = 7;
  EXPECT_EQ(tilec_compiled_code_object(nullptr, &size), nullptr);
  EXPECT_EQ(size, 0u);
  EXPECT_STREQ(tilec_compiled_name(nullptr), "");
  EXPECT_NE(lastError().find("tilec_compiled_name: compiled is NULL"), std::string::npos) << lastError();
  EXPECT_STREQ(tilec_compiled_manifest_entry(nullptr), "");
  EXPECT_STREQ(tilec_compiled_report(nullptr), "");
  EXPECT_EQ(tilec_compiled_add_to_bundle(nullptr, "/tmp"), TILEC_COMPILE_ERROR_INVALID_ARGUMENT);
  tilec_compiled_free(nullptr);
  EXPECT_STREQ(tilec_compile_status_name(static_cast<tilec_compile_status>(99)), "unknown status");
}

TEST(CApi, ErrorsArePerThread) {
  EXPECT_EQ(compileWith("gemmm", nullptr, nullptr), TILEC_COMPILE_ERROR_UNKNOWN_KERNEL);
  std::string other;
  std::thread t([&] {
    other = lastError();  // nothing failed on this thread yet
    EXPECT_EQ(compileWith("gemm", "waves", "99"), TILEC_COMPILE_ERROR_PARAM);
  });
  t.join();
  EXPECT_EQ(other, "");
  EXPECT_NE(lastError().find("gemmm"), std::string::npos) << lastError();
}

// Compiles tile IR, and its manifest entry is one a bundle manifest holds:
// the runtime's reader accepts it and finds the same facts.
TEST(CApi, TileIRManifestEntryReadsBack) {
  const std::string ir = readText(TILEC_CAPI_INPUTS "/tile-gemm-bf16-64x64x32.mlir");
  tilec_compiled *k = nullptr;
  tilec_compile_options opts = TILEC_COMPILE_OPTIONS_INIT;
  opts.target = "gfx90a";
  ASSERT_EQ(tilec_compile_tile_ir(ir.data(), ir.size(), "gemm.mlir", &opts, &k), TILEC_COMPILE_OK) << lastError();
  EXPECT_STREQ(tilec_compiled_name(k), "tile_gemm");
  size_t size = 0;
  const void *co = tilec_compiled_code_object(k, &size);
  ASSERT_GT(size, 4u);
  EXPECT_EQ(std::string(static_cast<const char *>(co), 4), "\177ELF");

  const std::string manifest = std::string("{\"format\": \"tilec-bundle\", \"format_version\": 1, ") +
                               "\"tilec_version\": \"" + tilec_compiler_version() + "\", \"kernels\": [" +
                               tilec_compiled_manifest_entry(k) + "]}";
  tilec::bundle::Manifest m;
  ASSERT_EQ(tilec::bundle::parse(manifest, m), "");
  ASSERT_EQ(m.kernels.size(), 1u);
  const tilec::bundle::KernelEntry &e = m.kernels[0];
  EXPECT_EQ(e.name, "tile_gemm");
  EXPECT_EQ(e.entry, "tile_gemm_gfx90a");
  EXPECT_EQ(e.target, "gfx90a");
  EXPECT_EQ(e.vendor, "amd");
  EXPECT_EQ(e.blockSize, 4 * 64);  // tile.num_waves = 4, wave64
  EXPECT_EQ(e.sha256, tilec::bundle::sha256Hex(co, size));
  ASSERT_EQ(e.args.size(), 3u);
  EXPECT_EQ(e.args[0].dtype, "bf16");
  EXPECT_EQ(e.args[0].rank, 2);
  // Its report is the same JSON tilec --emit=report --json prints.
  EXPECT_NE(std::string(tilec_compiled_report(k)).find("\"target\":\"gfx90a\""), std::string::npos)
      << tilec_compiled_report(k);

  // A bundle folder where a file is: an I/O error that names the path.
  const std::string file = TILEC_CAPI_SCRATCH "-not-a-folder";
  std::ofstream(file) << "x";
  EXPECT_EQ(tilec_compiled_add_to_bundle(k, file.c_str()), TILEC_COMPILE_ERROR_IO);
  EXPECT_NE(lastError().find(file), std::string::npos) << lastError();
  std::remove(file.c_str());
  tilec_compiled_free(k);
}

} // namespace
