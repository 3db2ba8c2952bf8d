// device_list_fuzzer.cpp — libFuzzer target for the example command line's
// -d lists (cli/device_list.hpp): any text either parses or is a UsageError
// naming -d/--device; a list that parses holds non-negative ids, no more
// than the limit, and prints back (device_ids_text) to a list that parses
// to the same ids. Anything else is a bug. docs/testing.md.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "anyp/example_cli.hpp"
#include "cli/device_list.hpp"

namespace {

void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "device_list_fuzzer: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::int64_t> ids;
  try {
    ids = anyp::cli::parse_device_list(text);
  } catch (const anyp::cli::UsageError& e) {
    require(e.message.rfind("-d/--device: ", 0) == 0, "a UsageError that does not name -d");
    return 0;
  }
  require(!ids.empty() && ids.size() <= (std::size_t{1} << 24), "a list of no or too many ids");
  for (const std::int64_t id : ids) require(id >= 0, "a negative id");
  if (ids.size() <= 4096)  // (a range of millions of ids is slow to print)
    require(anyp::cli::parse_device_list(anyp::cli::device_ids_text(ids, ",")) == ids,
            "a list that does not print back to itself");
  return 0;
}
