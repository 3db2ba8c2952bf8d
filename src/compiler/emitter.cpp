// emitter.cpp — instruction emission helpers for lowering.
#include "compiler/emitter.hpp"

#include "ir/op.hpp"

namespace anyp::compiler {

using runtime::Instr;
using runtime::Opcode;

std::int32_t Emitter::int_constant(std::int64_t v) {
  auto it = ints_.find(v);
  if (it != ints_.end()) return it->second;
  Instr i;
  i.op = Opcode::Const;
  i.dst = scalar_reg();
  i.imm = v;
  i.dtype = DType::INT32;
  code_.constants.push_back(i);
  return ints_[v] = i.dst;
}

std::int32_t Emitter::float_constant(double v) {
  auto it = floats_.find(v);
  if (it != floats_.end()) return it->second;
  Instr i;
  i.op = Opcode::Const;
  i.dst = scalar_reg();
  i.fimm = v;
  i.is_float = true;
  i.dtype = DType::FP32;
  code_.constants.push_back(i);
  return floats_[v] = i.dst;
}

void Emitter::set_site(const std::string& function, const std::string& op,
                       const ir::SourceLoc& loc) {
  const std::string where = ir::to_string(loc);
  for (std::size_t i = 0; i < code_.sites.size(); ++i) {
    const runtime::Site& s = code_.sites[i];
    if (s.function == function && s.op == op && s.where == where) {
      site_ = static_cast<std::int32_t>(i);
      return;
    }
  }
  code_.sites.push_back({function, op, where});
  site_ = static_cast<std::int32_t>(code_.sites.size() - 1);
}

std::string Emitter::site_function() const {
  return site_ < 0 ? std::string() : code_.sites[static_cast<std::size_t>(site_)].function;
}

std::int32_t Emitter::scratch_view(runtime::ScratchTensor t, std::int32_t group_of) {
  Instr i;
  i.op = Opcode::CreateView;
  i.sub = 1;  // not zeroed
  i.a = group_of;
  i.dst = view_reg();
  i.dtype = t.dtype;
  i.shape = t.shape;
  i.count = static_cast<std::int32_t>(t.slots);
  i.imm = static_cast<std::int64_t>(code_.scratch.size());
  code_.scratch.push_back(std::move(t));
  emit(i);
  return i.dst;
}

std::size_t Emitter::emit(Instr instr) {
  instr.site = site_;
  code_.instrs.push_back(std::move(instr));
  return code_.instrs.size() - 1;
}

void Emitter::mov(std::int32_t dst, std::int32_t src) {
  Instr i;
  i.op = Opcode::Mov;
  i.dst = dst;
  i.a = src;
  emit(i);
}

std::int32_t Emitter::binary(std::uint8_t op, std::int32_t a, std::int32_t b) {
  Instr i;
  i.op = Opcode::ScalarBin;
  i.sub = op;
  i.dst = scalar_reg();
  i.a = a;
  i.b = b;
  i.dtype = DType::INT32;
  emit(i);
  return i.dst;
}

void Emitter::for_range(std::int32_t start, std::int32_t stop, std::int32_t skip,
                        const std::function<void(std::int32_t)>& body) {
  const std::int32_t v = scalar_reg();
  mov(v, start);
  const std::size_t top = here();
  Instr test;
  test.op = Opcode::JumpIfGe;
  test.a = v;
  test.b = stop;
  const std::size_t exit_jump = emit(test);
  std::size_t skip_jump = 0;
  if (skip >= 0) {
    Instr s;
    s.op = Opcode::JumpIfZero;
    s.a = binary(static_cast<std::uint8_t>(ir::BinaryOp::Ne), v, skip);
    skip_jump = emit(s);
  }
  body(v);
  if (skip >= 0) patch(skip_jump, here());
  Instr inc;
  inc.op = Opcode::ScalarBin;
  inc.sub = static_cast<std::uint8_t>(ir::BinaryOp::Add);
  inc.dst = v;
  inc.a = v;
  inc.b = int_constant(1);
  inc.dtype = DType::INT64;  // v < stop <= INT64_MAX before it, so v + 1 cannot wrap
  emit(inc);
  Instr back;
  back.op = Opcode::Jump;
  back.imm = static_cast<std::int64_t>(top);
  emit(back);
  patch(exit_jump, here());
}

}  // namespace anyp::compiler
