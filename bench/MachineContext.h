// Records the machine a benchmark ran on (CPU model, hardware threads) in
// Google Benchmark's context, so reports state where numbers came from.
#pragma once

#include <benchmark/benchmark.h>

#include <fstream>
#include <string>
#include <thread>

namespace tilec::bench {

inline std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "unknown";
}

inline void addMachineContext() {
  benchmark::AddCustomContext("cpu_model", cpuModel());
  benchmark::AddCustomContext("hardware_concurrency", std::to_string(std::thread::hardware_concurrency()));
}

} // namespace tilec::bench
