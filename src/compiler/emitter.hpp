// emitter.hpp — appends instructions to LoweredCode: register allocation per
// file, a constant pool run at dispatch entry, source sites, jumps with
// patching, and a loop over ranks (optionally skipping one) for builtins.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "ir/source_loc.hpp"
#include "runtime/lowered_code.hpp"

namespace anyp::compiler {

class Emitter {
 public:
  explicit Emitter(runtime::LoweredCode& code) : code_(code) {}

  std::int32_t scalar_reg() { return code_.num_scalars++; }
  std::int32_t tile_reg() { return code_.num_tiles++; }
  std::int32_t view_reg() { return code_.num_views++; }
  std::int32_t int_constant(std::int64_t v);
  std::int32_t float_constant(double v);

  void set_site(const std::string& function, const std::string& op, const ir::SourceLoc& loc = {});
  std::int32_t site() const { return site_; }
  // The function of the current site ("" before the first).
  std::string site_function() const;

  // A view (register) of a new scratch buffer `t` of the code, made here;
  // not zeroed (a builtin's scratch: every element it reads it wrote first).
  // Its peers are those of view register `group_of` (the group of a comm
  // domain's view: peer k is the group's k-th rank), or world ranks (-1).
  std::int32_t scratch_view(runtime::ScratchTensor t, std::int32_t group_of = -1);

  std::size_t emit(runtime::Instr instr);
  std::size_t here() const { return code_.instrs.size(); }
  // Sets the jump target of instruction `at` to `target`.
  void patch(std::size_t at, std::size_t target) {
    code_.instrs[at].imm = static_cast<std::int64_t>(target);
  }

  void mov(std::int32_t dst, std::int32_t src);
  std::int32_t binary(std::uint8_t op, std::int32_t a, std::int32_t b);
  // for (v = start; v < stop; ++v) { if (v != skip) body(v); }  skip < 0: none.
  void for_range(std::int32_t start, std::int32_t stop, std::int32_t skip,
                 const std::function<void(std::int32_t)>& body);

 private:
  runtime::LoweredCode& code_;
  std::map<std::int64_t, std::int32_t> ints_;
  std::map<double, std::int32_t> floats_;
  std::int32_t site_ = -1;
};

}  // namespace anyp::compiler
