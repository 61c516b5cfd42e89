// Realigned row loads (tilec_global.h: Global::load_unaligned, realign; the
// hardware layers' align_bytes): a run of N elements that starts anywhere
// (rows of an odd number of elements, a buffer whose base is not 16-byte
// aligned) is read with aligned accesses of the run's width and shifted into
// place. Every lane reads one run of a small tensor or window and the test
// compares it with the elements it must hold: the tensor's where they lie
// inside its rows and columns, 0 elsewhere. The emulator reports any access
// that is misaligned or partly past num_records (docs/hardware.md section 4),
// so a clean run also shows that the buffer's first and last bytes, which no
// aligned piece lies wholly around, were read without crossing its bounds.
#include "EmuTestUtil.h"

#include <cstdint>
#include <cstring>

using namespace tilec::emu;
using namespace tilec::emu::test;

namespace {

// Lane t reads the run at row t / kCols - 1, column t % kCols of `g` (rows -1
// and `rows`, columns up to and past the last, all covered) and stores its
// bytes at out + t * 16. `window`: the same over g.window(1, 3, 2, 6).
const char *kRunKernel = R"(#include "tilec_prelude.h"
constexpr int kCols = 16;
template <class T, int N>
__device__ void readRuns(const T *p, int rows, int cols, int window, unsigned char *out) {
  const int t = tl::hw::thread_id();
  const tl::Global<T, TILEC_FLAGS> whole(p, rows, cols);
  const tl::Global<T, TILEC_FLAGS> g = window ? whole.window(1, 3, 2, 6) : whole;
  const auto run = tl::realign(g.template load_unaligned<N>(t / kCols - 1, t % kCols));
  __builtin_memcpy(out + 16 * t, &run, sizeof(run));
}
extern "C" __global__ void runs_bf16_8(const tl::bf16 *p, int rows, int cols, int window, unsigned char *out) {
  readRuns<tl::bf16, 8>(p, rows, cols, window, out);
}
extern "C" __global__ void runs_bf16_4(const tl::bf16 *p, int rows, int cols, int window, unsigned char *out) {
  readRuns<tl::bf16, 4>(p, rows, cols, window, out);
}
extern "C" __global__ void runs_bf16_2(const tl::bf16 *p, int rows, int cols, int window, unsigned char *out) {
  readRuns<tl::bf16, 2>(p, rows, cols, window, out);
}
extern "C" __global__ void runs_u8_16(const unsigned char *p, int rows, int cols, int window, unsigned char *out) {
  readRuns<unsigned char, 16>(p, rows, cols, window, out);
}
)";

constexpr int kCols = 16, kThreads = 6 * kCols;  // rows -1..4 of the lanes' grid

struct Case {
  const char *kernel;
  int elemBytes, runElems;
};

class Realign : public ::testing::TestWithParam<const char *> {};

TEST_P(Realign, RunsMatchTheTensorAtEveryAlignment) {
  const char *arch = GetParam();
  auto emu = makeEmulator(arch);
  std::string source = kRunKernel;
  const tilec::TargetInfo *target = tilec::lookupTarget(arch);
  ASSERT_NE(target, nullptr);
  source = "#define TILEC_FLAGS " + std::to_string(target->bufferRsrcFlags) + "u\n" + source;
  for (const Case c : {Case{"runs_bf16_8", 2, 8}, Case{"runs_bf16_4", 2, 4}, Case{"runs_bf16_2", 2, 2},
                       Case{"runs_u8_16", 1, 16}}) {
    auto k = loadOrFail(*emu, source, c.kernel);
    ASSERT_TRUE(k);
    const int runBytes = c.elemBytes * c.runElems;
    // 3 rows of 13 elements (odd: every row starts at a different
    // alignment), the tensor placed at every element offset within 16 bytes
    // of an aligned allocation; the allocation ends where the tensor does.
    const int rows = 3, cols = 13;
    for (int lead = 0; lead < 16; lead += c.elemBytes) {
      for (int window = 0; window <= 1; ++window) {
        const int tensorBytes = rows * cols * c.elemBytes;
        auto *mem = (unsigned char *)emu->allocate(lead + tensorBytes);
        auto *out = (unsigned char *)emu->allocate(16 * kThreads);
        for (int i = 0; i < lead + tensorBytes; ++i)
          mem[i] = (unsigned char)(0x40 + i * 7);  // no zero bytes: a dropped byte shows
        std::memset(out, 0xEE, 16 * kThreads);
        LaunchReport rep = launchOrFail(*emu, *k, {{1, 1, 1}, kThreads},
                                        {Arg::pointer(mem + lead), Arg::integer(rows), Arg::integer(cols),
                                         Arg::integer(window), Arg::pointer(out)});
        EXPECT_TRUE(rep.clean()) << arch << " " << c.kernel << " lead " << lead << ": " << rep.summary()
                                 << (rep.messages.empty() ? "" : "\n" + rep.messages.front());
        // The window at (1, 3) of 2 x 6 elements: its rows are the tensor's.
        const int r0 = window ? 1 : 0, c0 = window ? 3 : 0, nr = window ? 2 : rows, nc = window ? 6 : cols;
        for (int t = 0; t < kThreads; ++t) {
          const int r = t / kCols - 1, col = t % kCols;
          for (int b = 0; b < runBytes; ++b) {
            const int e = col + b / c.elemBytes;  // the element's column in the window
            const bool in = r >= 0 && r < nr && col < nc && e < nc;
            const unsigned char want =
                in ? mem[lead + ((r0 + r) * cols + c0 + e) * c.elemBytes + b % c.elemBytes] : 0;
            ASSERT_EQ(out[16 * t + b], want) << arch << " " << c.kernel << " lead " << lead << " window " << window
                                             << ": row " << r << " column " << col << " byte " << b;
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, Realign, ::testing::Values("gfx942", "gfx90a", "gfx1151", "sm_90a"));

} // namespace
