// The bundle manifest (lib/Rt/Manifest.h): SHA-256, JSON round trip, and the
// located errors of malformed manifests.
#include "Rt/Manifest.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace tilec::bundle;

TEST(Sha256, KnownVectors) {
  // FIPS 180-4 examples, and inputs whose padding needs one or two blocks.
  EXPECT_EQ(sha256Hex("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";  // 56 bytes
  EXPECT_EQ(sha256Hex(two.data(), two.size()), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const std::string million(1000000, 'a');
  EXPECT_EQ(sha256Hex(million.data(), million.size()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

KernelEntry sampleEntry(const std::string &target) {
  KernelEntry k;
  k.name = "scaled_rows";
  k.kernel = "test";
  k.params = {{"block", "64"}};
  k.target = target;
  k.vendor = vendorOf(target);
  k.entry = "scaled_rows_" + target;
  k.sha256 = sha256Hex(target.data(), target.size());
  k.tilecVersion = "0.1.0";
  k.compileOptions = {{"jit", "auto"}};
  k.blockSize = 256;
  k.ldsBytes = 65536;
  k.dynamicSharedBytes = k.vendor == "nvidia" ? k.ldsBytes - 1024 : 0;
  k.args = {{ArgSpec::Tensor, "X", "f16", 1, 8}, {ArgSpec::F32, "scale", "f32", 0, 1}, {ArgSpec::I32, "", "i32", 0, 4}};
  k.grid = {{2, -1, 64}, {-1, -1, 2}, {0, 0, 256}};
  k.codeObject = codeObjectFileName(k);
  return k;
}

TEST(Manifest, RoundTripAndReplacement) {
  Manifest m;
  m.tilecVersion = "0.1.0";
  m.put(sampleEntry("sm_90a"));
  m.put(sampleEntry("gfx942"));
  KernelEntry again = sampleEntry("sm_90a");
  again.blockSize = 128;
  m.put(again);  // same name and target: replaces
  ASSERT_EQ(m.kernels.size(), 2u);
  EXPECT_EQ(m.find("scaled_rows", "sm_90a")->blockSize, 128);

  Manifest back;
  ASSERT_EQ(parse(serialize(m), back), "");
  EXPECT_EQ(serialize(back), serialize(m));
  const KernelEntry &nv = *back.find("scaled_rows", "sm_90a");
  EXPECT_EQ(nv.vendor, "nvidia");
  EXPECT_EQ(nv.dynamicSharedBytes, 65536 - 1024);
  EXPECT_EQ(back.find("scaled_rows", "gfx942")->dynamicSharedBytes, 0);
  EXPECT_EQ(nv.args[2].divisibility, 4);  // an i32 argument's divisibility survives the round trip
  EXPECT_EQ(nv.codeObject, "scaled_rows_sm_90a." + nv.sha256.substr(0, 12) + ".cubin");
  EXPECT_EQ(gridExpression(nv.grid[0], nv.args), "ceil(arg2 / 64)");
  EXPECT_EQ(gridExpression(nv.grid[1], nv.args), "2");
  EXPECT_EQ(gridExpression(nv.grid[2], nv.args), "ceil(X.shape[0] / 256)");
}

TEST(Manifest, ElementBytes) {
  EXPECT_EQ(elementBytes("bf16"), 2);
  EXPECT_EQ(elementBytes("f32"), 4);
  EXPECT_EQ(elementBytes("i8"), 1);
  EXPECT_EQ(elementBytes("f8E4M3FNUZ"), 1);
}

/// `serialize` of a manifest holding `entry` (by default the sample) with
/// `from` replaced by `to`, parsed.
std::string parseEdited(const std::string &from, const std::string &to,
                        const KernelEntry &entry = sampleEntry("sm_90a")) {
  Manifest m;
  m.tilecVersion = "0.1.0";
  m.put(entry);
  std::string text = serialize(m);
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  Manifest out;
  return parse(text, out);
}

TEST(Manifest, MalformedManifestsNameTheField) {
  EXPECT_EQ(parseEdited("\"format_version\": 1", "\"format_version\": 3"),
            "manifest.format_version: version 3 is newer than this runtime reads (2)");
  EXPECT_EQ(parseEdited("\"block_size\": 256", "\"block_size\": 4096"),
            "kernels[0].block_size: expected an integer in [1, 1024]");
  EXPECT_EQ(parseEdited("\"vendor\": \"nvidia\"", "\"vendor\": \"intel\""),
            "kernels[0].vendor: expected amd or nvidia, got 'intel'");
  EXPECT_EQ(parseEdited("\"vendor\": \"nvidia\"", "\"vendor\": \"amd\""),
            "kernels[0].vendor: 'amd' is not the vendor of target 'sm_90a'");
  EXPECT_EQ(parseEdited("\"rank\": 1", "\"rank\": \"1\""), "kernels[0].args[0].rank: expected an integer in [1, 8]");
  EXPECT_EQ(parseEdited("\"kind\": \"f32\"", "\"kind\": \"f64\""),
            "kernels[0].args[1].kind: expected tensor, f32 or i32, got 'f64'");
  EXPECT_EQ(parseEdited("\"dim\": 0", "\"dim\": 1"), "kernels[0].grid[2]: argument 0 has no dimension 1");
  EXPECT_EQ(parseEdited("\"arg\": 2", "\"arg\": 1"), "kernels[0].grid[0]: argument 1 is not an i32 scalar");
  EXPECT_EQ(parseEdited("\"arg\": 2", "\"arg\": 3"), "kernels[0].grid[0].arg: expected an integer in [-1, 2]");
  EXPECT_EQ(parseEdited("\"sha256\": \"", "\"sha256\": \"X"), "kernels[0].sha256: expected 64 lower-case hex digits");
  EXPECT_EQ(parseEdited("\"code_object\": \"", "\"code_object\": \"../"),
            "kernels[0].code_object: expected a file name inside the bundle, got '../scaled_rows_sm_90a." +
                sampleEntry("sm_90a").sha256.substr(0, 12) + ".cubin'");
  EXPECT_EQ(parseEdited("\"kernels\": [", "\"kernels\": 3, \"x\": ["), "manifest.kernels: expected an array");
  EXPECT_EQ(parseEdited("{", "["), "not valid JSON");
}

/// A kernel taking a tensor map for its rank-2 argument W (tensor copies).
KernelEntry tensorMapEntry() {
  KernelEntry k = sampleEntry("sm_90a");
  k.name = "copy_rows";
  k.args = {{ArgSpec::Tensor, "W", "bf16", 2, 8, {128, 64, 128}}};
  k.grid = {{0, 0, 128}};
  k.codeObject = codeObjectFileName(k);
  return k;
}

std::string parseEditedTensorMap(const std::string &from, const std::string &to) {
  return parseEdited(from, to, tensorMapEntry());
}

TEST(Manifest, TensorMapRoundTripAndLimits) {
  Manifest m;
  m.put(tensorMapEntry());
  const std::string text = serialize(m);
  EXPECT_NE(text.find("\"tensor_map\": {\n"), std::string::npos) << text;
  // Older readers would not pass the map: the manifest says version 2.
  EXPECT_NE(text.find("\"format_version\": 2"), std::string::npos);
  Manifest back;
  ASSERT_EQ(parse(text, back), "");
  const ArgSpec &w = back.kernels.at(0).args.at(0);
  EXPECT_EQ(w.tensorMap.boxRows, 128);
  EXPECT_EQ(w.tensorMap.boxCols, 64);
  EXPECT_EQ(w.tensorMap.swizzleBytes, 128);
  EXPECT_EQ(serialize(back), text);
  // A tensor without a tensor map has no tensor_map field.
  Manifest plain;
  plain.put(sampleEntry("sm_90a"));
  EXPECT_EQ(serialize(plain).find("tensor_map"), std::string::npos);
  EXPECT_NE(serialize(plain).find("\"format_version\": 1"), std::string::npos);

  EXPECT_EQ(parseEditedTensorMap("\"swizzle\": 128", "\"swizzle\": 48"),
            "kernels[0].args[0].tensor_map.swizzle: expected 0, 32, 64 or 128");
  EXPECT_EQ(parseEditedTensorMap("\"swizzle\": 128", "\"swizzle\": 64"),
            "kernels[0].args[0].tensor_map.box: a box row of 128 bytes: a multiple of 16, at most the swizzle span");
  EXPECT_EQ(parseEditedTensorMap("\"box\": [\n", "\"box\": [\n 300, "),
            "kernels[0].args[0].tensor_map.box: expected [rows, cols], each in [1, 256]");
  EXPECT_EQ(parseEditedTensorMap("\"rank\": 2", "\"rank\": 1"), "kernels[0].args[0].tensor_map: tensor maps are for rank-2 tensors");
  EXPECT_EQ(parseEditedTensorMap("\"divisibility\": 8", "\"divisibility\": 4"),
            "kernels[0].args[0].tensor_map: a tensor map needs rows 16-byte aligned and a multiple of 16 bytes apart: "
            "divisibility 4 of bf16 does not promise it");
}

} // namespace
