// tilec DSL, implementation details: the kernel being recorded (detail::State)
// and the out-of-line definitions of the values' operations. Kernel code does
// not use this header directly.
//
// Standard library only (public header, house rule 7); throws nothing.
#pragma once

#include "tilec/dsl/dtype.hpp"
#include "tilec/dsl/kernel.hpp"
#include "tilec/dsl/values.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tilec::dsl {

//===----------------------------------------------------------------------===//
// Implementation details: the recorded kernel.
//===----------------------------------------------------------------------===//

namespace detail {

/// A divisibility a tensor or scalar argument may declare: a power of two in [1, 1024].
inline bool isValidDivisibility(int64_t d) { return d >= 1 && d <= 1024 && (d & (d - 1)) == 0; }

inline bool isIdentifier(const std::string &s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

inline std::string shapeStr(const std::vector<int64_t> &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

inline std::string memrefType(DType t, int rank) {
  std::string s = "memref<";
  for (int i = 0; i < rank; ++i)
    s += "?x";
  return s + mlirTypeName(t) + ">";
}

struct TileInfo {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype;
  Space space;
  int vid; ///< its value in the recording
  int rank() const { return static_cast<int>(shape.size()); }
};

struct TensorInfo {
  std::string name;
  DType dtype;
  int rank;
  int arg; ///< position in the kernel signature; -1 for a window (KernelBuilder::window)
  int region = 0; ///< where a window is defined (0: function body)
  int vid = -1;   ///< its value in the recording
  /// "A: memref<?x?xbf16>", as the dialect's verifier writes tensors.
  std::string str() const { return name + ": " + memrefType(dtype, rank); }
};

/// An Index value: its name in messages, where it is defined (0 = function
/// body, else a loop body) and its value in the recording.
struct ValueInfo {
  std::string name;
  int region;
  int vid;
};

/// One recorded operation. `loc` indexes State::locs; kPendingLoc: the next
/// located DSL call (the one consuming the value) gives it; kNoLoc: none.
struct Line {
  record::Op op;
  int loc;
};
constexpr int kPendingLoc = -1;
constexpr int kNoLoc = -2;

struct State {
  std::string name;
  int numWaves = 4;
  int funcLoc = 0;
  bool finished = false;

  // Errors: the first one wins. Index operators have no location of their own;
  // their errors wait for the next located call (`pendingError`).
  bool failed = false;
  std::string error;
  std::string pendingError;

  // The call being recorded (see Call).
  bool inCall = false;
  int cur = kPendingLoc;

  std::vector<std::pair<std::string, int>> locs;
  std::vector<Line> lines;
  std::vector<int> pendingLines;

  std::vector<record::Type> types; ///< every recorded value's type, by value id
  std::vector<KernelArg> args;
  std::vector<TensorInfo> tensors;
  std::vector<TileInfo> tiles;
  std::vector<ValueInfo> values;
  /// f32 scalars: the arguments (region 0) and the elements read from tensors
  /// (tile.load_scalar, in the loop body that reads them).
  struct ScalarInfo {
    int vid;
    int region;
  };
  std::vector<ScalarInfo> scalars;
  std::map<int, int> scalarArgOfValue; ///< Index value id of an i32/index argument -> its position

  // The entry block: constants, casts of i32 arguments, block ids, tensor
  // sizes and tile allocations, each emitted once, then the body.
  std::map<int64_t, int> constValue, constLine;
  std::vector<int> castLines;
  std::map<int, int> blockIdValue, blockIdLine, blockIdLoc;
  std::map<std::pair<int, int>, int> dimValue;
  std::vector<int> dimLines, allocLines, body;
  std::map<std::pair<std::string, int>, int> arithValue; ///< (op and operands, region) -> value

  std::vector<int> regions{0}; ///< loop bodies open now, innermost last
  int nextRegion = 1;
  std::set<std::string> names;
  int nextTemp = 0;

  bool gridSet = false;
  std::vector<GridDim> grid;

  int addLoc(const SourceLoc &l) {
    locs.emplace_back(l.file ? l.file : "<unknown>", l.line);
    return static_cast<int>(locs.size()) - 1;
  }
  std::string where(int loc) const {
    return locs[loc].first + ":" + std::to_string(locs[loc].second);
  }

  /// Start of a located DSL call: values computed since the last one (index
  /// arithmetic, constants) take this call's location, and so does a pending error.
  void begin(const SourceLoc &l) {
    cur = addLoc(l);
    inCall = true;
    for (int i : pendingLines)
      lines[i].loc = cur;
    pendingLines.clear();
    if (!pendingError.empty() && !failed) {
      failed = true;
      error = where(cur) + ": " + pendingError;
    }
    pendingError.clear();
  }

  /// Records a misuse by `op` (the IR op or DSL call it concerns).
  void report(const std::string &op, const std::string &msg) {
    if (failed || finished)
      return;
    if (inCall) {
      failed = true;
      error = where(cur) + ": " + op + ": " + msg;
    } else if (pendingError.empty()) {
      pendingError = op + ": " + msg;
    }
  }

  /// A new value of type `t`: its id in the recording.
  int newValue(record::Type t) {
    types.push_back(std::move(t));
    return static_cast<int>(types.size()) - 1;
  }
  static record::Type indexType() { return record::Type{}; }

  /// Records `op` at the current call's location (or the next one's).
  int addLine(record::Op op) {
    int loc = inCall ? cur : kPendingLoc;
    lines.push_back({std::move(op), loc});
    int i = static_cast<int>(lines.size()) - 1;
    if (loc == kPendingLoc)
      pendingLines.push_back(i);
    return i;
  }

  /// A fresh value name (for messages) from `base`, sanitised to [A-Za-z0-9_].
  std::string uniqueName(const std::string &base) {
    std::string s;
    for (char c : base)
      s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
      s = "v" + s;
    std::string unique = s;
    for (int n = 1; names.count(unique); ++n)
      unique = s + "_" + std::to_string(n);
    names.insert(unique);
    return unique;
  }
  std::string temp() { return uniqueName("i" + std::to_string(nextTemp++)); }

  /// A new Index value named `name` in `region`, defined by the op that
  /// records `vid` as its result.
  int addValue(std::string name, int region, int vid) {
    values.push_back({std::move(name), region, vid});
    return static_cast<int>(values.size()) - 1;
  }
  Index value(int id) { return Index(this, id); }
  /// A constant Index made by the DSL itself (a fold, or a placeholder after a misuse).
  static Index literal(int64_t v, std::optional<SourceLoc> loc = std::nullopt) {
    Index ix(v);
    ix.loc_ = loc;
    return ix;
  }

  Index constant(int64_t c) {
    auto it = constValue.find(c);
    if (it != constValue.end())
      return value(it->second);
    std::string name = uniqueName(c < 0 ? "c_neg" + std::to_string(c).substr(1) : "c" + std::to_string(c));
    int vid = newValue(indexType());
    int id = addValue(name, 0, vid);
    constValue[c] = id;
    constLine[c] = addLine({"arith.constant", {}, {vid}, {record::Attr::integer("value", c)}});
    return this->value(id);
  }

  bool inScope(int region) const {
    return std::find(regions.begin(), regions.end(), region) != regions.end();
  }

  /// The value id of `ix` (materialising constants), or nullopt after a misuse.
  std::optional<int> operand(const Index &ix, const std::string &op) {
    if (ix.isConstant())
      return values[constant(ix.const_).id_].vid;
    if (ix.state_ != this) {
      report(op, "uses an index value of a different kernel");
      return std::nullopt;
    }
    const ValueInfo &v = values[ix.id_];
    if (!inScope(v.region)) {
      report(op, "index value %" + v.name + " is used outside the loop body that defines it");
      return std::nullopt;
    }
    return v.vid;
  }

  /// `arith.<op> a, b` on indices in the current block, unless the same
  /// computation is already visible here (e.g. `j * 128` written twice).
  Index arith(const char *op, const Index &a, const Index &b) {
    std::string opName = std::string("arith.") + op;
    auto x = operand(a, opName), y = operand(b, opName);
    if (!x || !y)
      return detail::State::literal(0);
    std::string key = opName + " " + std::to_string(*x) + " " + std::to_string(*y);
    for (int region : regions) {
      auto it = arithValue.find({key, region});
      if (it != arithValue.end())
        return value(it->second);
    }
    int vid = newValue(indexType());
    body.push_back(addLine({opName, {{*x}, {*y}}, {vid}}));
    int id = addValue(temp(), regions.back(), vid);
    arithValue[{key, regions.back()}] = id;
    return value(id);
  }

  const TileInfo *tile(const Tile &t, const std::string &op, const char *role);
  const TensorInfo *tensor(const Tensor &t, const std::string &op, const char *role);

  enum class Divides { no, yes };
  /// a `op` b for Index operators: folded when both are constants, else one
  /// arith op in the kernel either belongs to, located at `loc` when given.
  static Index binary(const char *op, const Index &a, const Index &b,
                      std::optional<int64_t> (*fold)(int64_t, int64_t), Divides divides,
                      const SourceLoc *loc);
};

/// Scope of one located DSL call on `state`.
class Call {
public:
  Call(State *state, const SourceLoc &loc)
      : state_(state), outerInCall_(state->inCall), outerLoc_(state->cur) {
    state_->begin(loc);
  }
  ~Call() {
    state_->inCall = outerInCall_;
    state_->cur = outerLoc_;
  }
  Call(const Call &) = delete;
  Call &operator=(const Call &) = delete;

private:
  State *state_;
  bool outerInCall_;
  int outerLoc_;
};

} // namespace detail

//===----------------------------------------------------------------------===//
// Out-of-line definitions
//===----------------------------------------------------------------------===//

namespace detail {

inline const TileInfo *State::tile(const Tile &t, const std::string &op, const char *role) {
  if (!t.valid() || t.state_ != this) {
    report(op, std::string(role) + " is not a tile of this kernel" +
                   (t.valid() ? "" : " (default-constructed Tile)"));
    return nullptr;
  }
  return &tiles[t.id_];
}

inline const TensorInfo *State::tensor(const Tensor &t, const std::string &op, const char *role) {
  if (!t.valid() || t.state_ != this) {
    report(op, std::string(role) + " is not a tensor of this kernel" +
                   (t.valid() ? "" : " (default-constructed Tensor)"));
    return nullptr;
  }
  if (!inScope(tensors[t.id_].region)) {
    report(op, std::string(role) + " window " + tensors[t.id_].name +
                   " is used outside the loop body that defines it");
    return nullptr;
  }
  return &tensors[t.id_];
}

inline Index State::binary(const char *op, const Index &a, const Index &b,
                           std::optional<int64_t> (*fold)(int64_t, int64_t), Divides divides,
                           const SourceLoc *loc) {
  if (a.isConstant() && b.isConstant()) {
    std::optional<int64_t> v = fold(a.constant(), b.constant());
    if (v)
      return literal(*v, a.loc_ ? a.loc_ : b.loc_);
  }
  State *s = a.state_ ? a.state_ : b.state_;
  if (!s)
    return detail::State::literal(0); // a constant division by zero, with no kernel to report it to
  // Index operators have no location parameter; a constant operand knows
  // where it was written. Otherwise the next located DSL call (the consumer)
  // gives the location.
  if (!loc)
    loc = a.loc_ ? &*a.loc_ : b.loc_ ? &*b.loc_ : nullptr;
  std::optional<Call> call;
  if (loc)
    call.emplace(s, *loc);
  std::string opName = std::string("arith.") + op;
  if (divides == Divides::yes && b.isConstant() && b.constant() == 0) {
    s->report(opName, "division by zero");
    return detail::State::literal(0);
  }
  if (a.state_ && b.state_ && a.state_ != b.state_) {
    s->report(opName, "combines index values of two different kernels");
    return detail::State::literal(0);
  }
  return s->arith(op, a, b);
}

} // namespace detail

namespace detail {
using Fold = std::optional<int64_t> (*)(int64_t, int64_t);
} // namespace detail

inline Index operator+(const Index &a, const Index &b) {
  detail::Fold f = [](int64_t x, int64_t y) -> std::optional<int64_t> { return x + y; };
  return detail::State::binary("addi", a, b, f, detail::State::Divides::no, nullptr);
}
inline Index operator-(const Index &a, const Index &b) {
  detail::Fold f = [](int64_t x, int64_t y) -> std::optional<int64_t> { return x - y; };
  return detail::State::binary("subi", a, b, f, detail::State::Divides::no, nullptr);
}
inline Index operator*(const Index &a, const Index &b) {
  detail::Fold f = [](int64_t x, int64_t y) -> std::optional<int64_t> { return x * y; };
  return detail::State::binary("muli", a, b, f, detail::State::Divides::no, nullptr);
}
inline Index operator/(const Index &a, const Index &b) {
  detail::Fold f = [](int64_t x, int64_t y) -> std::optional<int64_t> {
    if (y == 0)
      return std::nullopt;
    return x / y;
  };
  return detail::State::binary("divui", a, b, f, detail::State::Divides::yes, nullptr);
}
inline Index operator%(const Index &a, const Index &b) {
  detail::Fold f = [](int64_t x, int64_t y) -> std::optional<int64_t> {
    if (y == 0)
      return std::nullopt;
    return x % y;
  };
  return detail::State::binary("remui", a, b, f, detail::State::Divides::yes, nullptr);
}
inline Index cdiv(const Index &a, const Index &b, SourceLoc loc) {
  detail::Fold f = [](int64_t x, int64_t y) -> std::optional<int64_t> {
    if (y == 0)
      return std::nullopt;
    return (x + y - 1) / y;
  };
  return detail::State::binary("ceildivui", a, b, f, detail::State::Divides::yes, &loc);
}
inline Index min(const Index &a, const Index &b, SourceLoc loc) {
  detail::Fold f = [](int64_t x, int64_t y) -> std::optional<int64_t> { return std::min(x, y); };
  return detail::State::binary("minui", a, b, f, detail::State::Divides::no, &loc);
}
inline Index max(const Index &a, const Index &b, SourceLoc loc) {
  detail::Fold f = [](int64_t x, int64_t y) -> std::optional<int64_t> { return std::max(x, y); };
  return detail::State::binary("maxui", a, b, f, detail::State::Divides::no, &loc);
}

inline GridExtent GridExtent::ceilDiv(const Tensor &t, int axis, int64_t tile) {
  return GridExtent(t.state_, t.valid() ? t.id_ : kNoTensor, axis, tile);
}
inline GridExtent GridExtent::ceilDiv(const Index &scalar, int64_t tile) {
  return GridExtent(scalar.state_, kScalar, scalar.isConstant() ? -1 : scalar.id_, tile);
}

inline Index Tensor::dim(int axis, SourceLoc loc) const {
  if (!valid())
    return detail::State::literal(0);
  detail::State &s = *state_;
  detail::Call call(&s, loc);
  const detail::TensorInfo *tp = s.tensor(*this, "memref.dim", "tensor");
  if (!tp)
    return detail::State::literal(0);
  const detail::TensorInfo &t = *tp;
  if (axis < 0 || axis >= t.rank) {
    s.report("memref.dim", "tensor " + t.str() + " has no dimension " + std::to_string(axis));
    return detail::State::literal(0);
  }
  if (t.arg < 0) {
    // A window's sizes are known where it is defined, not at the kernel's entry.
    std::string name = s.uniqueName(t.name + "_dim" + std::to_string(axis));
    int c = *s.operand(Index(axis), "memref.dim");
    int vid = s.newValue(detail::State::indexType());
    s.body.push_back(s.addLine({"memref.dim", {{t.vid}, {c}}, {vid}}));
    return s.value(s.addValue(name, s.regions.back(), vid));
  }
  auto it = s.dimValue.find({id_, axis});
  if (it != s.dimValue.end())
    return s.value(it->second);
  std::string name = s.uniqueName(t.name + "_dim" + std::to_string(axis));
  int c = *s.operand(Index(axis), "memref.dim");
  int vid = s.newValue(detail::State::indexType());
  s.dimLines.push_back(s.addLine({"memref.dim", {{t.vid}, {c}}, {vid}}));
  int id = s.addValue(name, 0, vid);
  s.dimValue[{id_, axis}] = id;
  return s.value(id);
}

inline const std::string &Tensor::name() const {
  static const std::string empty;
  return valid() ? state_->tensors[id_].name : empty;
}
inline DType Tensor::dtype() const { return valid() ? state_->tensors[id_].dtype : DType::f32; }
inline int Tensor::rank() const { return valid() ? state_->tensors[id_].rank : 0; }

inline const std::string &Tile::name() const {
  static const std::string empty;
  return valid() ? state_->tiles[id_].name : empty;
}
inline const std::vector<int64_t> &Tile::shape() const {
  static const std::vector<int64_t> empty;
  return valid() ? state_->tiles[id_].shape : empty;
}
inline DType Tile::dtype() const { return valid() ? state_->tiles[id_].dtype : DType::f32; }
inline Space Tile::space() const { return valid() ? state_->tiles[id_].space : Space::reg; }

} // namespace tilec::dsl
