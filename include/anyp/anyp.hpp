// anyp.hpp — everything a user program includes: pl, pld, host tensors,
// RunConfig, CompiledProgram and schedule exploration.
#pragma once

#include "anyp/compiled_program.hpp"
#include "anyp/dtype.hpp"
#include "anyp/engines.hpp"
#include "anyp/errors.hpp"
#include "anyp/explore.hpp"
#include "anyp/host_tensor.hpp"
#include "anyp/pl.hpp"
#include "anyp/pld.hpp"
#include "anyp/run_config.hpp"
#include "anyp/session.hpp"
