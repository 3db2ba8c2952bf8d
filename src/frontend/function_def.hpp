// function_def.hpp — a user function as defined with pl::jit::*: its name,
// level, parameter declarations and body lambda, traced into IR lazily (on
// first use) and exactly once. Tracing errors are kept and rethrown.
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

  // The traced IR. Throws anyp::CompileError if tracing failed.
  std::shared_ptr<const ir::Function> ir() const;

 private:
  std::shared_ptr<const ir::Function> trace() const;

  std::uint64_t id_;
  std::string name_;
  ir::Level level_;
  std::vector<pl::Param> params_;
  std::size_t body_arity_;
  BodyFn body_;
  mutable std::recursive_mutex mutex_;  // recursive: a recursive trace is reported, not hung
  mutable bool tracing_ = false;
  mutable std::shared_ptr<const ir::Function> traced_;
  mutable std::string error_;
};

ir::Type type_from_spec(const pl::TypeSpec& spec);

}  // namespace anyp::detail
