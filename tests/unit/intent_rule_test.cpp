// intent_rule_test.cpp — the pl::In rule (ir/intent_check.hpp): a tensor
// parameter declared In is read-only through every alias and at every level.
// Every write form is tried on the parameter itself, on a copy of its handle,
// on a helper's by-value parameter, on a slice and on a variable that holds it
// on one branch or on a later loop iteration; every call level is tried with
// Out and InOut callees. Each refusal is compared whole. Re-binding a copy to
// a writable tensor before the write is accepted, and the program runs.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "support/kernel_errors.hpp"

namespace {

constexpr std::int64_t SIZE = 32;
const pl::Dim NR = pl::dynamic("NR");

using anyp_test::trace_error;
using WriteForm = std::function<void(pl::Value& target, pl::Value& window)>;

// A kernel with x In, y Out, a window and a body.
pl::Function kernel_with(const std::string& name,
                         const std::function<void(pl::Value, pl::Value, pl::Value)>& body) {
  return pl::jit::incore(
      name,
      {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
       pl::InOut("w", pld::DistributedTensor({1, SIZE}, pl::FP32))},
      body);
}

struct Form {
  const char* label;
  const char* op;  // the op named in the refusal
  WriteForm write;
  bool slices_target = false;  // assemble writes a slice of its target
};

const std::vector<Form>& write_forms() {
  static const std::vector<Form> forms = {
      {"store", "pl.store",
       [](pl::Value& t, pl::Value& w) {
         t = pl::store(pl::load(w, {0, 0}, {1, SIZE}), {0, 0}, t);
       }},
      {"store_valid", "pl.store",
       [](pl::Value& t, pl::Value& w) {
         t = pl::store(pl::load(w, {0, 0}, {1, SIZE}), {0, 0}, t, {1, 8});
       }},
      {"write", "pl.write",
       [](pl::Value& t, pl::Value&) {
         pl::write(t, {0, 3}, 1.5);
       }},
      {"tensor_add", "pl.tensor.add", [](pl::Value& t, pl::Value& w) { pl::tensor::add(t, w, w); }},
      {"tensor_sub_scalar", "pl.tensor.sub",
       [](pl::Value& t, pl::Value& w) { pl::tensor::sub(t, w, 2.0); }},
      {"tensor_mul", "pl.tensor.mul", [](pl::Value& t, pl::Value& w) { pl::tensor::mul(t, t, w); }},
      {"tensor_maximum", "pl.tensor.maximum",
       [](pl::Value& t, pl::Value& w) { pl::tensor::maximum(t, w, 0.0); }},
      {"tensor_copy", "pl.tensor.copy", [](pl::Value& t, pl::Value& w) { pl::tensor::copy(t, w); }},
      {"tensor_assemble", "pl.tensor.copy",
       [](pl::Value& t, pl::Value& w) {
         pl::tensor::assemble(t, pl::tensor::slice(w, {0, 0}, {1, 8}), {0, 8});
       },
       true},
      {"get", "pld.tensor.get", [](pl::Value& t, pl::Value& w) { pld::tensor::get(t, 0, w); }},
      {"get_region", "pld.tensor.get",
       [](pl::Value& t, pl::Value& w) {
         pld::tensor::get(t, 0, w, {0, 0}, {0, 0}, {1, 8});
       }},
  };
  return forms;
}

// How the kernel reaches x before the write.
struct Route {
  const char* label;
  const char* through;  // "" for x itself, else the text after "parameter 'x'"
  std::function<void(pl::Value& x, pl::Value& y, pl::Value& w, const WriteForm&)> body;
};

void write_by_value(pl::Value t, pl::Value w, const WriteForm& write) { write(t, w); }

const std::vector<Route>& routes() {
  static const std::vector<Route> r = {
      {"itself", "", [](pl::Value& x, pl::Value&, pl::Value& w, const WriteForm& f) { f(x, w); }},
      {"copy", " (through a copy or view of its handle)",
       [](pl::Value& x, pl::Value&, pl::Value& w, const WriteForm& f) {
         pl::Value a = x;
         f(a, w);
       }},
      {"helper_by_value", " (through a copy or view of its handle)",
       [](pl::Value& x, pl::Value&, pl::Value& w, const WriteForm& f) { write_by_value(x, w, f); }},
      {"slice", " (through a copy or view of its handle)",
       [](pl::Value& x, pl::Value&, pl::Value& w, const WriteForm& f) {
         pl::Value s = pl::tensor::slice(x, {0, 0}, {1, SIZE});
         f(s, w);
       }},
      {"copy_of_a_copy", " (through a copy or view of its handle)",
       [](pl::Value& x, pl::Value&, pl::Value& w, const WriteForm& f) {
         pl::Value a = x;
         pl::Value b = a;
         f(b, w);
       }},
      {"one_branch", " (through a copy or view of its handle)",
       [](pl::Value& x, pl::Value& y, pl::Value& w, const WriteForm& f) {
         pl::Value a = y;
         auto ctx = pld::get_comm_ctx(w);
         pl::if_(pld::rank(ctx) == 1, [&] { a = x; });
         f(a, w);
       }},
      {"next_iteration", " (through a copy or view of its handle)",
       [](pl::Value& x, pl::Value& y, pl::Value& w, const WriteForm& f) {
         pl::Value a = y;
         pl::range(2, [&](pl::Scalar) {
           f(a, w);
           a = x;
         });
       }},
  };
  return r;
}

class InWriteRefused : public ::testing::TestWithParam<std::tuple<std::size_t, std::size_t>> {};

TEST_P(InWriteRefused, ThroughEveryAlias) {
  const Form& form = write_forms()[std::get<0>(GetParam())];
  const Route& route = routes()[std::get<1>(GetParam())];
  const pl::Function k = kernel_with(
      "k", [&](pl::Value x, pl::Value y, pl::Value w) { route.body(x, y, w, form.write); });
  EXPECT_EQ(trace_error(k),
            std::string("compile error: function 'k' (incore): ") + form.op +
                " writes parameter 'x'" +
                (form.slices_target && !*route.through ? " (through a copy or view of its handle)"
                                                       : route.through) +
                ", which is declared pl::In; declare it pl::Out or pl::InOut");
}

INSTANTIATE_TEST_SUITE_P(AllForms, InWriteRefused,
                         ::testing::Combine(::testing::Range<std::size_t>(0, 11),
                                            ::testing::Range<std::size_t>(0, 7)),
                         [](const auto& info) {
                           return std::string(write_forms()[std::get<0>(info.param)].label) + "_" +
                                  routes()[std::get<1>(info.param)].label;
                         });

TEST(InWriteRefused, FormTableIsComplete) {
  EXPECT_EQ(write_forms().size(), 11u);
  EXPECT_EQ(routes().size(), 7u);
}

// ---- accepted: a copy re-bound to a writable tensor, reads of In tensors --------------

const pl::Function kRebound = kernel_with("rebound", [](pl::Value x, pl::Value y, pl::Value w) {
  pl::Value a = x;
  w = pl::store(pl::load(a, {0, 0}, {1, SIZE}), {0, 0}, w);  // reading through the copy is fine
  a = y;                                                     // a now holds the Out tensor
  pl::Tile t = pl::load(w, {0, 0}, {1, SIZE});
  a = pl::store(pl::add(t, t), {0, 0}, a);
});

TEST(InRule, ACopyReboundToAnOutTensorIsWritable) {
  EXPECT_EQ(trace_error(kRebound), "traced without error");
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", kRebound);
  const pl::HostFunction host =
      pl::jit::host("host",
                    {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                     pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
                    [per_rank](pl::Value x, pl::Value y) {
                      auto buf = pld::alloc_window_buffer("w", {1, SIZE}, pl::FP32);
                      pl::range(pld::world_size(), [&](pl::Scalar r) {
                        auto w = pld::window(buf, {1, SIZE}, pl::FP32);
                        pl::Value xr = x[r];
                        pl::Value yr = y[r];
                        per_rank(xr, yr, w, pl::device(r));
                      });
                    });
  for (std::int64_t P : {2, 3}) {
    anyp::InputGenerator gen(7);
    anyp::HostTensor x = gen.uniform({P, 1, SIZE});
    const anyp::HostTensor x_before = x;
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
    host.compile({x, y}, anyp::RunConfig::for_world_size(P))(x, y);
    for (std::int64_t r = 0; r < P; ++r) {
      for (std::int64_t j = 0; j < SIZE; ++j) {
        EXPECT_EQ(y.at({r, 0, j}), 2 * x.at({r, 0, j}));
        EXPECT_EQ(x.at({r, 0, j}), x_before.at({r, 0, j}));
      }
    }
  }
}

// ---- calls: an In tensor passed to a writable parameter, at every level -------------

pl::Function writer_kernel(pl::Intent intent) {
  auto body = [](pl::Value t) { t = pl::store(pl::full({1, SIZE}, 1.0, pl::FP32), {0, 0}, t); };
  const pl::TypeSpec type = pl::Tensor({1, SIZE}, pl::FP32);
  return pl::jit::incore(
      "writer", {intent == pl::Intent::Out ? pl::Out("t", type) : pl::InOut("t", type)}, body);
}

TEST(InRule, OrchestrationPassesItsInParameterToAKernelsOutParameter) {
  const pl::Function k = writer_kernel(pl::Intent::Out);
  const pl::Function orch = pl::jit::orchestration(
      "orch", {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32))}, [k](pl::Value x) { k(x); });
  EXPECT_EQ(trace_error(orch),
            "compile error: function 'orch' (orchestration): call @writer passes parameter 'x', "
            "which is declared pl::In, to parameter 't' of 'writer', which is pl::Out ('writer' "
            "may write it); declare 'x' pl::InOut, or declare 't' pl::In if 'writer' only reads "
            "it");
}

TEST(InRule, OrchestrationPassesACopyOfItsInParameterToAKernelsInOutParameter) {
  const pl::Function k = writer_kernel(pl::Intent::InOut);
  const pl::Function orch = pl::jit::orchestration(
      "orch", {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32))}, [k](pl::Value x) {
        pl::Value a = x;
        k(a);
      });
  EXPECT_EQ(trace_error(orch),
            "compile error: function 'orch' (orchestration): call @writer passes parameter 'x' "
            "(through a copy or view of its handle), which is declared pl::In, to parameter "
            "'t' of 'writer', which is pl::InOut ('writer' may write it); declare 'x' pl::InOut, "
            "or declare 't' pl::In if 'writer' only reads it");
}

TEST(InRule, OrchestrationPassesASliceOfItsInParameterToAKernel) {
  const pl::Function k = writer_kernel(pl::Intent::Out);
  const pl::Function orch = pl::jit::orchestration(
      "orch", {pl::In("x", pl::Tensor({2, SIZE}, pl::FP32))}, [k](pl::Value x) {
        k(pl::tensor::slice(x, {1, 0}, {1, SIZE}));
      });
  EXPECT_EQ(trace_error(orch),
            "compile error: function 'orch' (orchestration): call @writer passes parameter 'x' "
            "(through a copy or view of its handle), which is declared pl::In, to parameter "
            "'t' of 'writer', which is pl::Out ('writer' may write it); declare 'x' pl::InOut, "
            "or declare 't' pl::In if 'writer' only reads it");
}

pl::HostFunction host_passing_x_to(const pl::Function& orch, bool through_copy) {
  return pl::jit::host("host", {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
                       [orch, through_copy](pl::Value x) {
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           pl::Value xr = x[r];
                           if (through_copy) {
                             pl::Value c = xr;
                             orch(c, pl::device(r));
                           } else {
                             orch(xr, pl::device(r));
                           }
                         });
                       });
}

TEST(InRule, HostPassesItsInTensorToAnOrchestrationOutParameter) {
  const pl::Function orch = pl::jit::orchestration_for("orch", writer_kernel(pl::Intent::Out));
  for (bool through_copy : {false, true}) {
    const pl::HostFunction host = host_passing_x_to(orch, through_copy);
    anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, SIZE}, pl::FP32);
    std::string error = "compiled without error";
    try {
      host.compile({x}, anyp::RunConfig::for_world_size(2));
    } catch (const anyp::CompileError& e) {
      error = e.what();
    }
    EXPECT_EQ(error,
              "compile error: function 'host' (host): call @orch passes parameter 'x' (through a "
              "copy or view of its handle), which is declared pl::In, to parameter 't' of "
              "'orch', which is pl::Out ('orch' may write it); declare 'x' pl::InOut, or declare "
              "'t' pl::In if 'orch' only reads it");
  }
}

TEST(InRule, InToInIsAcceptedAtEveryLevel) {
  const pl::Function reader = pl::jit::incore(
      "reader",
      {pl::In("t", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("o", pl::Tensor({1, SIZE}, pl::FP32))},
      [](pl::Value t, pl::Value o) {
        o = pl::store(pl::load(t, {0, 0}, {1, SIZE}), {0, 0}, o);
      });
  const pl::Function orch = pl::jit::orchestration_for("orch", reader);
  const pl::HostFunction host = pl::jit::host("host",
                                              {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                                               pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
                                              [orch](pl::Value x, pl::Value y) {
                                                pl::range(pld::world_size(), [&](pl::Scalar r) {
                                                  pl::Value xr = x[r];
                                                  pl::Value yr = y[r];
                                                  orch(xr, yr, pl::device(r));
                                                });
                                              });
  anyp::InputGenerator gen(3);
  anyp::HostTensor x = gen.uniform({3, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({3, 1, SIZE}, pl::FP32);
  host.compile({x, y}, anyp::RunConfig::for_world_size(3))(x, y);
  EXPECT_EQ(y.at({2, 0, 5}), x.at({2, 0, 5}));
}

}  // namespace
