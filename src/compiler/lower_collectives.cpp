// lower_collectives.cpp — the self-clearing credit barrier as VM code.
#include "compiler/lower_collectives.hpp"

#include "ir/op.hpp"

namespace anyp::compiler {

using runtime::Instr;
using runtime::Opcode;

namespace {

void notify(Emitter& e, std::int32_t signal, std::int32_t peer, std::int32_t row, std::int32_t value) {
  Instr i;
  i.op = Opcode::Notify;
  i.sub = static_cast<std::uint8_t>(ir::NotifyKind::AtomicAdd);
  i.a = signal;
  i.b = peer;
  i.c = value;
  i.idx = {row, e.int_constant(0)};
  e.emit(i);
}

void wait_ge(Emitter& e, std::int32_t signal, std::int32_t row, std::int32_t expected) {
  Instr i;
  i.op = Opcode::Wait;
  i.sub = static_cast<std::uint8_t>(ir::WaitKind::Ge);
  i.a = signal;
  i.b = expected;
  i.idx = {row, e.int_constant(0)};
  e.emit(i);
}

// Barrier k of a call with `total` barriers; the epilogue runs after the last.
void credit_barrier(Emitter& e, const CollectiveRegs& regs, std::int32_t signal, std::int64_t k,
                    std::int64_t total) {
  const std::int32_t zero = e.int_constant(0);
  const std::int32_t one = e.int_constant(1);
  e.for_range(zero, regs.nranks, regs.rank,
              [&](std::int32_t peer) { notify(e, signal, peer, regs.rank, one); });
  const std::int32_t expected = e.int_constant(k);
  e.for_range(zero, regs.nranks, regs.rank,
              [&](std::int32_t s) { wait_ge(e, signal, s, expected); });
  if (k == total) {
    const std::int32_t minus_total = e.int_constant(-total);
    e.for_range(zero, regs.nranks, regs.rank,
                [&](std::int32_t s) { notify(e, signal, regs.rank, s, minus_total); });
  }
}

}  // namespace

void lower_barrier(Emitter& e, const CollectiveRegs& regs, std::int32_t signal) {
  credit_barrier(e, regs, signal, 1, 1);
}

}  // namespace anyp::compiler
