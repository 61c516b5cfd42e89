// A thread-exit abort of LLVM 19's AddressSanitizer runtime, reproduced without
// tilec's code: a thread makes LLVM's first signal-handler registration in the
// process, then exits. docs/fuzzing.md ("Sanitizers") has the whole story.
//
// ASan gives each thread an alternate signal stack of 4 x SIGSTKSZ bytes
// (mmap), and when the thread exits it unmaps whatever alternate stack the
// thread has at that moment, taking it for its own. LLVM's first signal-handler
// registration (AddSignalHandler, RemoveFileOnSignal: clang and lld register
// when they open an output file) replaces the calling thread's alternate stack
// with a malloc'd one of SIGSTKSZ + 64 KiB bytes unless the stack in place has
// at least that size. With glibc >= 2.34 SIGSTKSZ is sysconf(_SC_SIGSTKSZ),
// four times the CPU's signal frame (at least 8 KiB), so ASan's stack is the
// smaller one when SIGSTKSZ < 64 KiB / 3: on CPUs without AMX. There the
// thread exits with LLVM's heap block as its alternate stack, ASan's munmap of
// it fails (EINVAL: not page-aligned) and the runtime stops the process:
//   AddressSanitizer: CHECK failed: ... "unable to unmmap" ...
//
// On a CPU with AMX, ASan's stack is large enough and LLVM keeps it; this
// program then swaps in a stack of the size ASan gives on a CPU without AMX
// before registering, so that it fails the same way on every machine.
//
// Build (what tests/sanitizer/CMakeLists.txt does):
//   clang++-19 -fsanitize=address -shared-libsan \
//     -Wl,-rpath,$(dirname $(clang-19 -print-file-name=libclang_rt.asan-x86_64.so)) \
//     -I/usr/lib/llvm-19/include llvm_altstack_thread_exit.cpp \
//     -L/usr/lib/llvm-19/lib -Wl,-rpath,/usr/lib/llvm-19/lib -lLLVM -o repro
//   ASAN_OPTIONS=abort_on_error=0 ./repro        # fails: "unable to unmmap"
//   ASAN_OPTIONS=use_sigaltstack=0 ./repro       # passes: "thread joined"

#include "llvm/Support/Signals.h"

#include <csignal>
#include <cstdio>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>

namespace {

/// What LLVM 19 (lib/Support/Unix/Signals.inc) asks of an alternate stack.
size_t llvmAltStackSize() { return static_cast<size_t>(sysconf(_SC_SIGSTKSZ)) + 64 * 1024; }

/// ASan's alternate stack on a CPU with the smallest signal frame: 4 x glibc's
/// floor for SIGSTKSZ (8 KiB).
constexpr size_t kSmallAsanAltStack = 4 * 8192;

void registerOnThisThread() {
  stack_t current{};
  sigaltstack(nullptr, &current);
  std::fprintf(stderr, "thread: alternate stack of %zu bytes, LLVM wants %zu\n",
              current.ss_flags & SS_DISABLE ? 0 : current.ss_size, llvmAltStackSize());
  if (!(current.ss_flags & SS_DISABLE) && current.ss_size >= llvmAltStackSize()) {
    // ASan's stack is large enough on this CPU: give the thread one of the
    // size it has on a CPU without AMX (mmap'd and page-aligned, as ASan's).
    stack_t small{};
    small.ss_size = kSmallAsanAltStack;
    small.ss_sp = mmap(nullptr, small.ss_size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (small.ss_sp == MAP_FAILED || sigaltstack(&small, nullptr) != 0) {
      std::perror("sigaltstack");
      return;
    }
    std::fprintf(stderr, "thread: replaced by %zu bytes, as on a CPU without AMX\n", small.ss_size);
  }
  // LLVM's first registration in the process: installs its own alternate
  // stack on this thread when the one in place is smaller than it wants.
  llvm::sys::AddSignalHandler([](void *) {}, nullptr);
  sigaltstack(nullptr, &current);
  std::fprintf(stderr, "thread: after LLVM's registration, %zu bytes; exiting\n",
              current.ss_flags & SS_DISABLE ? 0 : current.ss_size);
}

} // namespace

int main() {
  std::thread worker(registerOnThisThread);
  worker.join();
  std::fprintf(stderr, "thread joined\n");
  return 0;
}
