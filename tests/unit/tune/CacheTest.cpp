// The tuning cache: round trip, corrupt files, key checks, folder rules.
#include "Tune/TuneCache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

using namespace tilec::tune;
namespace fs = std::filesystem;

namespace {

std::string freshDir(const std::string &name) {
  fs::path d = fs::path(::testing::TempDir()) / ("tilec-tune-" + name + "-" + std::to_string(std::random_device{}()));
  fs::remove_all(d);
  return d.string();
}

TuneCacheKey key() {
  return {"gemm", "dtype=bf16;out=f32", "512x512x512", "gfx942", "tilec test", "block_m=128", "model"};
}

TuneRecord record() {
  TuneRecord r;
  r.M = 500, r.N = 512, r.K = 300;
  r.method = "cost model";
  RankedCandidate c;
  c.tile = {128, 64, 32, 4, 2};
  c.kernelName = "gemm_bf16_f32_128x64x32_w4_s2_gfx942";
  c.instr = "v_mfma_f32_32x32x8_bf16";
  c.vgpr = 40, c.agpr = 32, c.ldsBytes = 12288, c.occupancy = 8;
  c.seconds = 1.25e-5, c.pctOfPeak = 41.5;
  r.ranking = {c, c};
  r.ranking[1].tile.stages = 3;
  return r;
}

} // namespace

TEST(TuneCache, RoundTrip) {
  std::string dir = freshDir("roundtrip");
  TuneCache cache(dir);
  EXPECT_FALSE(cache.load(key()));
  ASSERT_TRUE(cache.store(key(), record()));
  EXPECT_EQ(fs::path(cache.path(key())).parent_path(), fs::path(dir) / "tune");
  std::optional<TuneRecord> r = cache.load(key());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->M, 500);
  EXPECT_EQ(r->K, 300);
  EXPECT_EQ(r->method, "cost model");
  ASSERT_EQ(r->ranking.size(), 2u);
  EXPECT_EQ(r->ranking[0].tile, record().ranking[0].tile);
  EXPECT_EQ(r->ranking[1].tile.stages, 3);
  EXPECT_EQ(r->ranking[0].instr, "v_mfma_f32_32x32x8_bf16");
  EXPECT_DOUBLE_EQ(r->ranking[0].seconds, 1.25e-5);
  EXPECT_EQ(r->ranking[0].ldsBytes, 12288);
  // No temporary files left behind.
  size_t files = 0;
  for (auto &e : fs::directory_iterator(fs::path(dir) / "tune"))
    files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
}

TEST(TuneCache, EveryKeyFieldSelectsAnotherFile) {
  TuneCacheKey a = key();
  std::vector<TuneCacheKey> others(7, a);
  others[0].kernel = "other";
  others[1].fixedParams = "dtype=f16;out=f32";
  others[2].shapeClass = "1024x512x512";
  others[3].arch = "gfx90a";
  others[4].compilerIdentity = "tilec other";
  others[5].space = "block_m=64";
  others[6].method = "measured:gpu";
  for (const TuneCacheKey &o : others)
    EXPECT_NE(o.fileName(), a.fileName());
}

TEST(TuneCache, CorruptFileIsReportedOnceAndIgnored) {
  std::string dir = freshDir("corrupt");
  std::vector<std::string> warnings;
  TuneCache cache(dir, [&](const std::string &m) { warnings.push_back(m); });
  ASSERT_TRUE(cache.store(key(), record()));
  {
    std::ofstream f(cache.path(key()), std::ios::trunc);
    f << "{\"format\": 1, \"key\": tru";
  }
  EXPECT_FALSE(cache.load(key()));
  EXPECT_FALSE(cache.load(key()));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("corrupt tuning cache file"), std::string::npos) << warnings[0];
  // A new result replaces it.
  ASSERT_TRUE(cache.store(key(), record()));
  EXPECT_TRUE(cache.load(key()));
}

TEST(TuneCache, WellFormedButWrongFieldsIsCorrupt) {
  std::string dir = freshDir("fields");
  std::vector<std::string> warnings;
  TuneCache cache(dir, [&](const std::string &m) { warnings.push_back(m); });
  ASSERT_TRUE(cache.store(key(), record()));
  {
    std::ofstream f(cache.path(key()), std::ios::trunc);
    f << "{\"format\": 1, \"key\": \"x\", \"M\": 1, \"N\": 1, \"K\": 1, \"method\": \"m\", \"ranking\": [{\"block_m\": \"a\"}]}";
  }
  EXPECT_FALSE(cache.load(key()));
  EXPECT_EQ(warnings.size(), 1u);
}

TEST(TuneCache, FileForAnotherKeyIsNotAHit) {
  std::string dir = freshDir("otherkey");
  std::vector<std::string> warnings;
  TuneCache cache(dir, [&](const std::string &m) { warnings.push_back(m); });
  TuneCacheKey other = key();
  other.compilerIdentity = "tilec other";
  ASSERT_TRUE(cache.store(other, record()));
  fs::copy_file(cache.path(other), cache.path(key()));  // as if two keys hashed alike
  EXPECT_FALSE(cache.load(key()));
  EXPECT_TRUE(warnings.empty());
}

TEST(TuneCache, FolderFollowsTheCodeObjectCacheRules) {
  EXPECT_EQ(tuneCacheDir("/x/y"), "/x/y/tune");
  const char *saved = std::getenv("TILEC_CACHE_DIR");
  std::string keep = saved ? saved : "";
  setenv("TILEC_CACHE_DIR", "/a/b", 1);
  EXPECT_EQ(tuneCacheDir(""), "/a/b/tune");
  unsetenv("TILEC_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(tuneCacheDir(""), "/xdg/tilec/tune");
  unsetenv("XDG_CACHE_HOME");
  if (saved)
    setenv("TILEC_CACHE_DIR", keep.c_str(), 1);
}
