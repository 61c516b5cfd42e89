// Reading AMDGPU code objects: offload-bundle extraction and the Report from
// the NT_AMDGPU_METADATA note (the disassembly it counts matrix instructions in:
// Disassembly.cpp).

#include "JIT/ElfFile.h"
#include "JIT/JIT.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/BinaryFormat/MsgPackReader.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/Compression.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/Format.h"

namespace tilec::jit {
namespace {

constexpr llvm::StringLiteral kElfMagic = "\x7f" "ELF";
constexpr llvm::StringLiteral kBundleMagic = "__CLANG_OFFLOAD_BUNDLE__";
constexpr llvm::StringLiteral kCompressedBundleMagic = "CCOB";

} // namespace

llvm::Expected<llvm::object::ELF64LEObjectFile> openElf(llvm::ArrayRef<char> elf) {
  if (!asStringRef(elf).starts_with(kElfMagic))
    return llvm::createStringError("not an ELF code object (%zu bytes)", elf.size());
  return llvm::object::ELF64LEObjectFile::create(
      llvm::MemoryBufferRef(asStringRef(elf), "code object"));
}

namespace {

/// True when the bundle entry id (e.g. "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-")
/// names `arch` exactly (gfx90a must not match gfx90).
bool bundleIdNamesArch(llvm::StringRef id, llvm::StringRef arch) {
  if (!id.contains("amdgcn"))
    return false;
  for (size_t pos = id.find(arch); pos != llvm::StringRef::npos; pos = id.find(arch, pos + 1)) {
    llvm::StringRef after = id.substr(pos + arch.size());
    bool endsWell = after.empty() || after.front() == ':';
    bool startsWell = pos > 0 && id[pos - 1] == '-';
    if (endsWell && startsWell)
      return true;
  }
  return false;
}

/// Compressed bundle ("CCOB"): magic, u16 version, u16 method (0 zlib, 1 zstd),
/// [v2: u32 total size | v3: u64 total size], uncompressed size (u32, v3: u64),
/// u64 hash, then the compressed plain bundle.
llvm::Expected<std::vector<char>> decompressBundle(llvm::StringRef blob) {
  using namespace llvm::support;
  if (blob.size() < 8)
    return llvm::createStringError("truncated compressed offload bundle");
  uint16_t version = endian::read16le(blob.data() + 4);
  uint16_t method = endian::read16le(blob.data() + 6);
  size_t header = version == 1 ? 20 : version == 2 ? 24 : version == 3 ? 32 : 0;
  if (header == 0 || blob.size() < header)
    return llvm::createStringError("unsupported compressed offload bundle version %u", version);
  uint64_t rawSize = version == 1   ? endian::read32le(blob.data() + 8)
                     : version == 2 ? endian::read32le(blob.data() + 12)
                                    : endian::read64le(blob.data() + 16);
  llvm::ArrayRef<uint8_t> input(reinterpret_cast<const uint8_t *>(blob.data()) + header,
                                blob.size() - header);
  llvm::SmallVector<uint8_t, 0> output;
  llvm::compression::Format format =
      method == 1 ? llvm::compression::Format::Zstd : llvm::compression::Format::Zlib;
  if (llvm::Error err = llvm::compression::decompress(format, input, output, rawSize))
    return std::move(err);
  return std::vector<char>(output.begin(), output.end());
}

} // namespace

llvm::Expected<std::vector<char>> extractCodeObject(llvm::ArrayRef<char> blob,
                                                    llvm::StringRef arch) {
  using namespace llvm::support;
  llvm::StringRef data = asStringRef(blob);
  if (data.starts_with(kElfMagic))
    return std::vector<char>(blob.begin(), blob.end());
  if (data.starts_with(kCompressedBundleMagic)) {
    llvm::Expected<std::vector<char>> plain = decompressBundle(data);
    if (!plain)
      return plain.takeError();
    return extractCodeObject(*plain, arch);
  }
  if (!data.starts_with(kBundleMagic))
    return llvm::createStringError("code object is neither an ELF nor an offload bundle");

  // Bundle: magic, u64 entry count, per entry u64 offset, u64 size, u64 id
  // length, id; payloads at their offsets.
  auto truncated = [] { return llvm::createStringError("truncated offload bundle"); };
  size_t pos = kBundleMagic.size();
  auto readU64 = [&](uint64_t &v) {
    if (pos + 8 > data.size())
      return false;
    v = endian::read64le(data.data() + pos);
    pos += 8;
    return true;
  };
  uint64_t entries = 0;
  if (!readU64(entries))
    return truncated();
  std::vector<std::string> ids;
  for (uint64_t i = 0; i < entries; ++i) {
    uint64_t offset, size, idLength;
    if (!readU64(offset) || !readU64(size) || !readU64(idLength) ||
        idLength > data.size() - pos)
      return truncated();
    llvm::StringRef id = data.substr(pos, idLength);
    pos += idLength;
    ids.push_back(id.str());
    if (size == 0 || !bundleIdNamesArch(id, arch))
      continue;
    if (offset > data.size() || size > data.size() - offset)
      return truncated();
    llvm::StringRef payload = data.substr(offset, size);
    if (!payload.starts_with(kElfMagic))
      return llvm::createStringError("offload bundle entry '%s' is not an ELF", id.str().c_str());
    return std::vector<char>(payload.begin(), payload.end());
  }
  return llvm::createStringError("offload bundle has no code object for %s (entries: %s)",
                                 arch.str().c_str(), llvm::join(ids, ", ").c_str());
}

namespace {

/// The msgpack map of the first kernel in the NT_AMDGPU_METADATA note, with the
/// document that owns it.
struct KernelMetadata {
  llvm::msgpack::Document document;
  llvm::msgpack::MapDocNode kernel;
};

/// True when `blob` holds one complete msgpack object whose map keys are all
/// strings, as in AMDGPU metadata. msgpack::Document orders map keys with a
/// comparison that traps (llvm_unreachable) on array and map keys, so a
/// damaged note is checked with the plain reader first.
bool msgpackKeysAreStrings(llvm::StringRef blob) {
  struct Open {
    uint64_t left;  ///< items still to read (a map's keys and values both count)
    bool map;
  };
  llvm::msgpack::Reader reader(blob);
  llvm::SmallVector<Open, 8> open;
  do {
    llvm::msgpack::Object object;
    llvm::Expected<bool> read = reader.read(object);
    if (!read) {
      llvm::consumeError(read.takeError());
      return false;
    }
    if (!*read)
      return false;  // truncated
    if (!open.empty()) {
      bool isKey = open.back().map && open.back().left % 2 == 0;
      if (isKey && object.Kind != llvm::msgpack::Type::String)
        return false;
      --open.back().left;
    }
    if (object.Kind == llvm::msgpack::Type::Map && object.Length > 0)
      open.push_back({2 * uint64_t(object.Length), true});
    else if (object.Kind == llvm::msgpack::Type::Array && object.Length > 0)
      open.push_back({uint64_t(object.Length), false});
    while (!open.empty() && open.back().left == 0)
      open.pop_back();
  } while (!open.empty());
  return true;
}

llvm::Error readKernelMetadata(const llvm::object::ELF64LEObjectFile &object,
                               KernelMetadata &out) {
  const auto &elf = object.getELFFile();
  auto sections = elf.sections();
  if (!sections)
    return sections.takeError();
  const uint64_t fileSize = elf.getBufSize();
  for (const auto &section : *sections) {
    if (section.sh_type != llvm::ELF::SHT_NOTE)
      continue;
    // LLVM 19 checks sh_offset + sh_size against the file size, a sum that
    // wraps for a huge sh_size (found by fuzzing:
    // tests/fuzz/regressions/code_object/note-section-offset-overflow.elf).
    if (section.sh_offset > fileSize || section.sh_size > fileSize - section.sh_offset)
      return llvm::createStringError("note section extends past the end of the code object");
    llvm::Error err = llvm::Error::success();
    for (const auto &note : elf.notes(section, err)) {
      if (note.getName() != "AMDGPU" || note.getType() != llvm::ELF::NT_AMDGPU_METADATA)
        continue;
      llvm::StringRef blob = note.getDescAsStringRef(section.sh_addralign);
      if (!msgpackKeysAreStrings(blob) || !out.document.readFromBlob(blob, /*Multi=*/false))
        return llvm::createStringError("malformed AMDGPU metadata (msgpack)");
      llvm::msgpack::DocNode &root = out.document.getRoot();
      if (!root.isMap())
        return llvm::createStringError("AMDGPU metadata is not a map");
      auto kernels = root.getMap().find("amdhsa.kernels");
      if (kernels == root.getMap().end() || !kernels->second.isArray() ||
          kernels->second.getArray().empty() || !kernels->second.getArray()[0].isMap())
        return llvm::createStringError("AMDGPU metadata lists no kernel");
      out.kernel = kernels->second.getArray()[0].getMap();
      return err;
    }
    if (err)
      return err;
  }
  return llvm::createStringError("code object has no NT_AMDGPU_METADATA note");
}

int64_t metadataInt(llvm::msgpack::MapDocNode &kernel, llvm::StringRef key) {
  auto it = kernel.find(key);
  if (it == kernel.end())
    return 0;
  switch (it->second.getKind()) {
  case llvm::msgpack::Type::Int: return it->second.getInt();
  case llvm::msgpack::Type::UInt: return static_cast<int64_t>(it->second.getUInt());
  default: return 0;
  }
}

int countMatrixInstructions(llvm::StringRef disassembly) {
  int count = 0;
  llvm::SmallVector<llvm::StringRef, 0> lines;
  disassembly.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    llvm::StringRef mnemonic = line.ltrim();
    if (mnemonic.starts_with("v_mfma") || mnemonic.starts_with("v_smfmac") ||
        mnemonic.starts_with("v_wmma") || mnemonic.starts_with("v_swmmac"))
      ++count;
  }
  return count;
}

} // namespace

llvm::Expected<Report> readReport(llvm::ArrayRef<char> elf, const TargetInfo &target,
                                  int wavesPerWorkgroup) {
  llvm::Expected<llvm::object::ELF64LEObjectFile> object = openElf(elf);
  if (!object)
    return object.takeError();
  KernelMetadata metadata;
  if (llvm::Error err = readKernelMetadata(*object, metadata))
    return std::move(err);
  llvm::msgpack::MapDocNode &kernel = metadata.kernel;

  Report report;
  if (auto name = kernel.find(".name"); name != kernel.end() && name->second.isString())
    report.kernel = name->second.getString().str();
  report.target = target.arch;
  // .vgpr_count counts the unified register file on CDNA: alignTo(arch, 4) + AGPRs.
  int64_t agpr = metadataInt(kernel, ".agpr_count");
  int64_t vgprTotal = metadataInt(kernel, ".vgpr_count");
  report.agpr = static_cast<int>(agpr);
  report.vgpr = static_cast<int>(target.hasAgprs && agpr > 0 ? vgprTotal - agpr : vgprTotal);
  report.sgpr = static_cast<int>(metadataInt(kernel, ".sgpr_count"));
  report.ldsBytes = metadataInt(kernel, ".group_segment_fixed_size");
  report.scratchBytes = metadataInt(kernel, ".private_segment_fixed_size");
  report.vgprSpills = static_cast<int>(metadataInt(kernel, ".vgpr_spill_count"));
  report.sgprSpills = static_cast<int>(metadataInt(kernel, ".sgpr_spill_count"));
  report.waveSize = static_cast<int>(metadataInt(kernel, ".wavefront_size"));
  report.occupancy = target.occupancy(report.vgpr, report.agpr, report.ldsBytes,
                                      std::max(wavesPerWorkgroup, 1));
  report.matrixInstructions = countMatrixInstructions(disassemble(elf, target));
  report.codeObjectBytes = static_cast<int64_t>(elf.size());
  return report;
}

llvm::Expected<Report> readReport(const CodeObject &code, const TargetInfo &target,
                                  int wavesPerWorkgroup, int64_t launchLdsBytes) {
  llvm::Expected<Report> report = target.vendor == Vendor::NVIDIA
                                      ? readCubinReport(code, target, wavesPerWorkgroup, launchLdsBytes)
                                      : readReport(code.elf, target, wavesPerWorkgroup);
  if (report) {
    report->jit = jitName(code.compiler);
    report->compilerIdentity = code.compilerIdentity;
    report->fromCache = code.fromCache;
  }
  return report;
}

llvm::Expected<KernelNote> readKernelNote(llvm::ArrayRef<char> elf) {
  llvm::Expected<llvm::object::ELF64LEObjectFile> object = openElf(elf);
  if (!object)
    return object.takeError();
  KernelMetadata metadata;
  if (llvm::Error err = readKernelMetadata(*object, metadata))
    return std::move(err);
  llvm::msgpack::MapDocNode &kernel = metadata.kernel;
  KernelNote note;
  note.eFlags = object->getELFFile().getHeader().e_flags;
  if (auto name = kernel.find(".name"); name != kernel.end() && name->second.isString())
    note.name = name->second.getString().str();
  note.wavefrontSize = metadataInt(kernel, ".wavefront_size");
  note.maxFlatWorkgroupSize = metadataInt(kernel, ".max_flat_workgroup_size");
  note.kernargSegmentSize = metadataInt(kernel, ".kernarg_segment_size");
  note.privateSegmentFixedSize = metadataInt(kernel, ".private_segment_fixed_size");
  if (auto args = kernel.find(".args"); args != kernel.end() && args->second.isArray()) {
    for (llvm::msgpack::DocNode &node : args->second.getArray()) {
      if (!node.isMap())
        return llvm::createStringError("AMDGPU metadata: an .args entry is not a map");
      llvm::msgpack::MapDocNode &arg = node.getMap();
      KernelNote::Arg a;
      a.offset = metadataInt(arg, ".offset");
      a.size = metadataInt(arg, ".size");
      if (auto kind = arg.find(".value_kind"); kind != arg.end() && kind->second.isString())
        a.valueKind = kind->second.getString().str();
      note.args.push_back(a);
    }
  }
  return note;
}

} // namespace tilec::jit
