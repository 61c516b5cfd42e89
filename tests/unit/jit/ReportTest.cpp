// Report JSON/text, occupancy (docs/hardware.md section 6) and offload-bundle
// extraction.

#include "JIT/JIT.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/JSON.h"

#include <gtest/gtest.h>

using namespace tilec;
using namespace tilec::jit;

namespace {

struct OccupancyCase {
  int vgpr;
  int waves;
};

TEST(Occupancy, Gfx942MatchesTheTable) {
  const TargetInfo &t = *lookupTarget("gfx942");
  for (OccupancyCase c : {OccupancyCase{64, 8}, {65, 7}, {96, 5}, {128, 4}, {129, 3}, {256, 2},
                          {512, 1}})
    EXPECT_EQ(t.occupancy(c.vgpr, /*agpr=*/0, /*ldsBytes=*/0, 1), c.waves) << c.vgpr;
}

TEST(Occupancy, Gfx1151MatchesTheTable) {
  const TargetInfo &t = *lookupTarget("gfx1151");
  for (OccupancyCase c : {OccupancyCase{96, 16}, {128, 10}, {192, 8}, {256, 5}})
    EXPECT_EQ(t.occupancy(c.vgpr, 0, 0, 1), c.waves) << c.vgpr;
}

TEST(ReportJson, RoundTripsWithAllKeys) {
  Report r;
  r.kernel = "gemm";
  r.target = "gfx942";
  r.jit = "clang";
  r.compilerIdentity = "clang 19.1.7 (in-process)";
  r.vgpr = 128;
  r.agpr = 64;
  r.sgpr = 30;
  r.ldsBytes = 32768;
  r.scratchBytes = 0;
  r.vgprSpills = 1;
  r.sgprSpills = 2;
  r.waveSize = 64;
  r.occupancy = 2;
  r.matrixInstructions = 16;
  r.codeObjectBytes = 9000;
  r.fromCache = true;
  r.ldsTiles = {{"a_lds", "A", 16384, 8, 16, 0}, {"b_lds", "B", 16384, 8, 4, 12}};

  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(r.toJson());
  ASSERT_TRUE(!!parsed) << llvm::toString(parsed.takeError());
  const llvm::json::Object *o = parsed->getAsObject();
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->size(), 16u);
  EXPECT_EQ(o->getString("kernel"), "gemm");
  EXPECT_EQ(o->getString("target"), "gfx942");
  EXPECT_EQ(o->getString("jit"), "clang");
  EXPECT_EQ(o->getInteger("vgpr"), 128);
  EXPECT_EQ(o->getInteger("agpr"), 64);
  EXPECT_EQ(o->getInteger("sgpr"), 30);
  EXPECT_EQ(o->getInteger("lds_bytes"), 32768);
  EXPECT_EQ(o->getInteger("scratch_bytes"), 0);
  EXPECT_EQ(o->getInteger("vgpr_spills"), 1);
  EXPECT_EQ(o->getInteger("sgpr_spills"), 2);
  EXPECT_EQ(o->getInteger("wave_size"), 64);
  EXPECT_EQ(o->getInteger("occupancy"), 2);
  EXPECT_EQ(o->getInteger("matrix_instructions"), 16);
  EXPECT_EQ(o->getInteger("code_object_bytes"), 9000);
  EXPECT_EQ(o->getBoolean("cached"), true);
  const llvm::json::Array *tiles = o->getArray("lds_tiles");
  ASSERT_NE(tiles, nullptr);
  ASSERT_EQ(tiles->size(), 2u);
  const llvm::json::Object *b = (*tiles)[1].getAsObject();
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->getString("name"), "b_lds");
  EXPECT_EQ(b->getString("role"), "B");
  EXPECT_EQ(b->getInteger("bytes"), 16384);
  EXPECT_EQ(b->getInteger("read_bytes"), 8);
  EXPECT_EQ(b->getInteger("write_bytes"), 4);
  EXPECT_EQ(b->getInteger("bank_conflicts"), 12);
}

TEST(ReportText, MentionsTheFacts) {
  Report r;
  r.kernel = "gemm";
  r.target = "gfx1151";
  r.jit = "clang";
  r.waveSize = 32;
  r.occupancy = 10;
  std::string text = r.toText();
  EXPECT_NE(text.find("gemm"), std::string::npos);
  EXPECT_NE(text.find("gfx1151"), std::string::npos);
  EXPECT_NE(text.find("wave32"), std::string::npos);
  EXPECT_NE(text.find("10 waves/SIMD"), std::string::npos);
}

/// A clang offload bundle with the given (id, payload) entries.
std::vector<char> makeBundle(const std::vector<std::pair<std::string, std::string>> &entries) {
  std::string header = "__CLANG_OFFLOAD_BUNDLE__";
  auto u64 = [](std::string &s, uint64_t v) {
    char b[8];
    llvm::support::endian::write64le(b, v);
    s.append(b, 8);
  };
  size_t headerSize = header.size() + 8;
  for (const auto &e : entries)
    headerSize += 24 + e.first.size();
  u64(header, entries.size());
  std::string payloads;
  for (const auto &[id, payload] : entries) {
    u64(header, headerSize + payloads.size());
    u64(header, payload.size());
    u64(header, id.size());
    header += id;
    payloads += payload;
  }
  std::string all = header + payloads;
  return std::vector<char>(all.begin(), all.end());
}

TEST(OffloadBundle, PicksTheArchEntry) {
  const std::string gfx90 = std::string("\x7f" "ELF-gfx90");
  const std::string gfx90a = std::string("\x7f" "ELF-gfx90a");
  std::vector<char> bundle = makeBundle({{"host-x86_64-unknown-linux", ""},
                                         {"hipv4-amdgcn-amd-amdhsa--gfx90", gfx90},
                                         {"hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", gfx90a}});
  llvm::Expected<std::vector<char>> elf = extractCodeObject(bundle, "gfx90a");
  ASSERT_TRUE(!!elf) << llvm::toString(elf.takeError());
  EXPECT_EQ(std::string(elf->begin(), elf->end()), gfx90a);
  elf = extractCodeObject(bundle, "gfx90");
  ASSERT_TRUE(!!elf) << llvm::toString(elf.takeError());
  EXPECT_EQ(std::string(elf->begin(), elf->end()), gfx90);
}

TEST(OffloadBundle, ElfPassesThrough) {
  std::vector<char> elf = {0x7f, 'E', 'L', 'F', 1, 2, 3};
  llvm::Expected<std::vector<char>> out = extractCodeObject(elf, "gfx942");
  ASSERT_TRUE(!!out) << llvm::toString(out.takeError());
  EXPECT_EQ(*out, elf);
}

TEST(OffloadBundle, MissingArchAndTruncationAreErrors) {
  std::vector<char> bundle =
      makeBundle({{"hipv4-amdgcn-amd-amdhsa--gfx90a", std::string("\x7f" "ELF")}});
  llvm::Expected<std::vector<char>> out = extractCodeObject(bundle, "gfx942");
  ASSERT_FALSE(!!out);
  EXPECT_NE(llvm::toString(out.takeError()).find("no code object for gfx942"), std::string::npos);
  bundle.resize(40);
  out = extractCodeObject(bundle, "gfx90a");
  ASSERT_FALSE(!!out);
  EXPECT_NE(llvm::toString(out.takeError()).find("truncated"), std::string::npos);
}

TEST(ReadReport, RejectsNonElf) {
  std::vector<char> junk(64, 'x');
  llvm::Expected<Report> report = readReport(junk, *lookupTarget("gfx942"), 1);
  ASSERT_FALSE(!!report);
  llvm::consumeError(report.takeError());
  EXPECT_EQ(disassemble(junk, *lookupTarget("gfx942")).rfind("error:", 0), 0u);
}

} // namespace
