// json_text.hpp — a string as a JSON string literal (the artifact's
// manifest and the DFX records write JSON with the standard library only).
#pragma once

#include <string>

namespace anyp {

// "s" with ", \ and control characters escaped.
std::string json_string(const std::string& s);

}  // namespace anyp
