// Test helpers: build DSL kernels into tile IR, parse and verify it.
#pragma once

#include "tilec/dsl.hpp"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tilec::test {

/// An MLIR context with the dialects tile IR uses (tile, func, arith, scf, memref).
class TileIR {
public:
  TileIR();

  /// Parses `text` (without verifying); nullptr on a parse error (see diagnostics()).
  mlir::OwningOpRef<mlir::ModuleOp> parse(const std::string &text);
  /// Parses and runs mlir::verify; nullptr on either failing.
  mlir::OwningOpRef<mlir::ModuleOp> parseAndVerify(const std::string &text);
  /// Builds a recorded kernel (as tilec::compile does) and verifies it;
  /// nullptr on either failing.
  mlir::OwningOpRef<mlir::ModuleOp> build(const Kernel &kernel);

  /// Diagnostics so far, one per line: "file:line: message" (the op's location).
  const std::string &diagnostics() const { return diagnostics_; }
  /// The locations of the diagnostics so far.
  struct DiagLoc {
    std::string file;
    unsigned line;
    std::string message;
  };
  const std::vector<DiagLoc> &diagnosticLocs() const { return diagLocs_; }

  mlir::MLIRContext &context() { return context_; }

private:
  mlir::MLIRContext context_;
  std::string diagnostics_;
  std::vector<DiagLoc> diagLocs_;
};

/// gtest assertion: the kernel is ok and its IR builds and verifies.
::testing::AssertionResult verifies(const Kernel &kernel);

/// The kernel's tile IR as text (as tilec::tileIR prints it); the builder's
/// diagnostics instead when it does not build.
std::string text(const Kernel &kernel);

/// Number of occurrences of `needle` in `text`.
int count(const std::string &text, const std::string &needle);

/// gtest assertion: the `needles` occur in `text` in this order (each after the previous).
::testing::AssertionResult containsInOrder(const std::string &text,
                                           const std::vector<std::string> &needles);

} // namespace tilec::test
