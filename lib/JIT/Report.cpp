// tilec::Report as JSON (llvm::json) and as text (fmt).

#include "tilec/report.hpp"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

namespace tilec {

std::string Report::toJson() const {
  llvm::json::Object object{
      {"kernel", kernel},
      {"target", target},
      {"jit", jit},
      {"vgpr", vgpr},
      {"agpr", agpr},
      {"sgpr", sgpr},
      {"lds_bytes", ldsBytes},
      {"scratch_bytes", scratchBytes},
      {"vgpr_spills", vgprSpills},
      {"sgpr_spills", sgprSpills},
      {"wave_size", waveSize},
      {"occupancy", occupancy},
      {"matrix_instructions", matrixInstructions},
      {"code_object_bytes", codeObjectBytes},
      {"cached", fromCache},
  };
  llvm::json::Array tiles;
  for (const LdsTileReport &t : ldsTiles)
    tiles.push_back(llvm::json::Object{{"name", t.name},
                                       {"role", t.role},
                                       {"bytes", t.bytes},
                                       {"read_bytes", t.readBytes},
                                       {"write_bytes", t.writeBytes},
                                       {"bank_conflicts", t.bankConflicts}});
  object["lds_tiles"] = std::move(tiles);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(object));
  return text;
}

std::string Report::toText() const {
  std::string text = fmt::format("kernel {} on {} (wave{})\n", kernel, target, waveSize);
  text += fmt::format("  compiler     {}{}{}\n", jit,
                      compilerIdentity.empty() ? "" : ": " + compilerIdentity,
                      fromCache ? " [cached]" : "");
  text += fmt::format("  registers    {} VGPR, {} AGPR, {} SGPR\n", vgpr, agpr, sgpr);
  text += fmt::format("  spills       {} VGPR, {} SGPR\n", vgprSpills, sgprSpills);
  text += fmt::format("  memory       {} bytes LDS, {} bytes scratch\n", ldsBytes, scratchBytes);
  text += fmt::format("  occupancy    {} waves/SIMD\n", occupancy);
  text += fmt::format("  matrix ops   {}\n", matrixInstructions);
  text += fmt::format("  code object  {} bytes\n", codeObjectBytes);
  for (const LdsTileReport &t : ldsTiles)
    text += fmt::format("  lds tile     {}{}: {} bytes, {}-byte writes, {}, {} modelled conflict cycles\n", t.name,
                        t.role.empty() ? "" : t.role == "conversion" ? " (layout conversion)" : " (operand " + t.role + ")", t.bytes, t.writeBytes,
                        t.readBytes > 0 ? fmt::format("{}-byte operand reads", t.readBytes) : std::string("no operand reads"),
                        t.bankConflicts);
  return text;
}

} // namespace tilec
