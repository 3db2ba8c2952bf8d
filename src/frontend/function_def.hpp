// function_def.hpp — a user function as defined with pl::jit::*: its name,
// level, parameter declarations and body lambda, traced into IR lazily (on
// first use) and, once a trace succeeds, never again. A trace that throws
// (a CompileError, or any exception from the user's body) keeps nothing: the
// exception propagates unchanged and the next use traces from scratch.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "anyp/pl.hpp"
#include "ir/function.hpp"

namespace anyp::detail {

class FunctionDef {
 public:
  FunctionDef(std::string name, ir::Level level, std::vector<pl::Param> params,
              std::size_t body_arity, BodyFn body);

  const std::string& name() const { return name_; }
  // Unique for the life of the process (never reused, unlike an address):
  // the compile cache keys plans by it.
  std::uint64_t id() const { return id_; }
  ir::Level level() const { return level_; }
  const std::vector<pl::Param>& params() const { return params_; }

  // After its trace, a tensor parameter declared InOut that the body never
  // writes becomes In (a scope outlined from a traced body, whose
  // parameters are what it captures: frontend/function_def.cpp).
  void narrow_intents() { narrow_intents_ = true; }

  // The traced IR. Rethrows whatever tracing threw (anyp::CompileError, or
  // the body's own exception, unchanged); a failed trace is not cached.
  std::shared_ptr<const ir::Function> ir() const;

 private:
  std::shared_ptr<const ir::Function> trace() const;

  std::uint64_t id_;
  std::string name_;
  ir::Level level_;
  std::vector<pl::Param> params_;
  std::size_t body_arity_;
  BodyFn body_;
  bool narrow_intents_ = false;
  mutable std::recursive_mutex mutex_;  // recursive: a recursive trace is reported, not hung
  mutable bool tracing_ = false;        // set only while trace() runs
  mutable std::shared_ptr<const ir::Function> traced_;  // set only by a trace that succeeded
};

ir::Type type_from_spec(const pl::TypeSpec& spec);

}  // namespace anyp::detail
