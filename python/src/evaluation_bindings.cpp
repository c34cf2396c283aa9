// Expressions (evaluate), evaluation (compute, to_numpy), plans (the Plan class, plan,
// execute_plan, compute_plan) and cancel_at_exit.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <b2lazy/b2lazy.hpp>

#include "bindings.hpp"
#include "convert.hpp"
#include "interruptible.hpp"

namespace b2lazy_py {

using namespace b2lazy;

namespace {

// compute()'s and plan()'s keyword arguments as ComputeOptions (errors name the argument).
ComputeOptions compute_options(const std::optional<std::string>& urlpath, nb::handle chunks, nb::handle blocks,
                               const std::string& codec, int clevel, const std::string& filter, nb::handle max_memory,
                               std::optional<bool> contiguous, nb::handle shards, const std::string& compressor) {
  ComputeOptions o;
  o.urlpath = urlpath.value_or("");
  o.chunks = to_shape(chunks, "chunks");
  o.blocks = to_shape(blocks, "blocks");
  o.shards = to_shape(shards, "shards");
  o.cparams = CParams{codec, clevel, filter, compressor};
  o.contiguous = contiguous;
  if (auto mm = to_max_memory(max_memory)) o.max_memory = *mm;
  return o;
}

}  // namespace

void bind_expressions(nb::module_& m) {
  m.def(
      "evaluate",
      [](const std::string& expression, nb::dict operands, Context* ctx) {
        std::map<std::string, Operand> ops;
        for (auto [k, v] : operands) {
          const std::string name = nb::cast<std::string>(k);
          if (nb::isinstance<Array>(v)) ops.emplace(name, nb::cast<Array>(v));
          else if (auto s = as_scalar(v)) ops.emplace(name, *s);
          else throw TypeError("evaluate: operand '" + name + "' is not an array or a number");
        }
        return interruptible([&] { return evaluate(expression, ops, ctx); });  // masks and index arrays are read now
      },
      nb::arg("expression"), nb::arg("operands"), nb::arg("ctx").none());
  m.def("expression_names", [](const std::string& expression) { return expression_names(expression); });
  m.def("expression_functions", [] { return expression_functions(); });
}

void bind_evaluation(nb::module_& m) {
  m.def(
      "compute",
      [](const Array& a, std::optional<std::string> urlpath, nb::handle chunks, nb::handle blocks,
         const std::string& codec, int clevel, const std::string& filter, Context* ctx, nb::handle max_memory,
         std::optional<bool> contiguous, nb::object progress, nb::handle shards, const std::string& compressor,
         nb::handle storage_options) {
        ComputeOptions o =
            compute_options(urlpath, chunks, blocks, codec, clevel, filter, max_memory, contiguous, shards, compressor);
        o.storage = b2lazy_py::store_options(storage_options);
        Progress p{progress};
        o.progress = p.function();
        o.cancel = &p.stop;
        return interruptible([&] { return a.compute(o, ctx); }, &p);
      },
      nb::arg("a"), nb::arg("urlpath").none(), nb::arg("chunks").none(), nb::arg("blocks").none(), nb::arg("codec"),
      nb::arg("clevel"), nb::arg("filter"), nb::arg("ctx"), nb::arg("max_memory").none(), nb::arg("contiguous").none(),
      nb::arg("progress").none(), nb::arg("shards").none() = nb::none(), nb::arg("compressor") = "blosc",
      nb::arg("storage_options").none() = nb::none());
  m.def(
      "compute_all",
      [](const std::vector<Array>& arrays, const std::vector<std::optional<std::string>>& urlpaths,
         const std::string& codec, int clevel, const std::string& filter, Context* ctx, nb::handle max_memory,
         std::optional<bool> contiguous, const std::string& compressor, nb::handle storage_options) {
        std::vector<ComputeOptions> opts;
        for (const auto& u : urlpaths) {
          ComputeOptions o = compute_options(u, nb::none(), nb::none(), codec, clevel, filter, max_memory, contiguous,
                                             nb::none(), compressor);
          o.storage = b2lazy_py::store_options(storage_options);
          opts.push_back(std::move(o));
        }
        return interruptible([&] { return compute_all(arrays, opts, ctx); });
      },
      nb::arg("arrays"), nb::arg("urlpaths"), nb::arg("codec"), nb::arg("clevel"), nb::arg("filter"),
      nb::arg("ctx").none(), nb::arg("max_memory").none(), nb::arg("contiguous").none(),
      nb::arg("compressor") = "blosc", nb::arg("storage_options").none() = nb::none());
  m.def(
      "to_numpy",
      [](const Array& a, Context* ctx, nb::handle max_memory, nb::object progress) {
        nb::object np = nb::module_::import_("numpy");
        nb::object out = np.attr("empty")(shape_tuple(a.shape()), dtype_name(a.dtype()));
        auto buf = nb::cast<nb::ndarray<nb::device::cpu>>(out);
        void* data = buf.data();
        EvalOptions o;
        if (auto mm = to_max_memory(max_memory)) o.max_memory = *mm;
        Progress p{progress};
        o.progress = p.function();
        o.cancel = &p.stop;
        Stats s = interruptible([&] { return a.to_buffer(data, o, ctx); }, &p);
        return nb::make_tuple(out, stats_dict(s));
      },
      nb::arg("a"), nb::arg("ctx"), nb::arg("max_memory").none(), nb::arg("progress").none());
  // Plans (b2lazy/plan.hpp): what compute() would run, printable, executable by task ranges.
  nb::class_<Plan>(m, "Plan")
      .def("__str__", [](const Plan& p) { return p.to_string(); })
      .def_prop_ro("shape", [](const Plan& p) { return shape_tuple(p.root->shape()); })
      .def_prop_ro("dtype", [](const Plan& p) { return std::string(dtype_name(p.root->dtype())); })
      .def_prop_ro("chunks", [](const Plan& p) { return shape_tuple(p.chunks); })
      .def_prop_ro("blocks", [](const Plan& p) { return shape_tuple(p.blocks); })
      .def_prop_ro("nchunks", [](const Plan& p) { return p.nchunks; })
      .def_prop_ro("ntasks", [](const Plan& p) { return p.tasks.size(); })
      .def_prop_ro("nworkers", [](const Plan& p) { return p.nworkers; })
      .def_prop_ro("max_memory", [](const Plan& p) { return p.options.max_memory; })
      .def_prop_ro("projected_peak", [](const Plan& p) { return p.projected_peak; })
      .def_prop_ro("kept_bytes", [](const Plan& p) { return p.kept_bytes; })
      .def_prop_ro("kept_read_bytes", [](const Plan& p) { return p.kept_read_bytes; })
      .def_prop_ro("block_major", [](const Plan& p) { return p.block_major; })
      .def_prop_ro("passes", [](const Plan& p) { return p.passes; })
      .def_prop_ro("source_bytes",
                   [](const Plan& p) {
                     nb::dict d;
                     for (auto& [name, b] : p.source_bytes) d[name.c_str()] = b;
                     return d;
                   })
      .def_prop_ro("stages",
                   [](const Plan& p) {
                     nb::list l;
                     for (auto& s : p.stages) {
                       nb::dict d;
                       d["node"] = s.node->describe();
                       d["kind"] = s.node->kind();
                       d["source"] = s.source;
                       d["name"] = s.node->source_name();
                       d["box"] = nb::make_tuple(shape_tuple(s.box.start), shape_tuple(s.box.stop));
                       d["where"] = s.where == KeptIn::Dense        ? "dense"
                                    : s.where == KeptIn::Compressed ? "compressed"
                                                                    : "spilled";
                       d["chunks"] = shape_tuple(s.chunks);
                       d["bytes"] = s.bytes;
                       d["pulled_bytes"] = s.pulled_bytes;
                       d["once_bytes"] = s.once_bytes;
                       d["projected_bytes"] = s.memory.per_task;
                       d["threads"] = s.memory.threads;
                       d["carried_by"] = s.carried_by ? nb::object(nb::str(s.carried_by->kind().c_str())) : nb::none();
                       l.append(d);
                     }
                     return l;
                   })
      .def_prop_ro("windows",
                   [](const Plan& p) {
                     nb::list l;
                     for (auto& w : p.windows) {
                       nb::dict d;
                       d["node"] = w.node->describe();
                       d["name"] = w.node->source_name();
                       d["blocks"] = w.blocks;
                       d["bytes"] = w.bytes;
                       d["pulled_bytes"] = w.pulled_bytes;
                       d["read_bytes"] = w.read_bytes;
                       l.append(d);
                     }
                     return l;
                   })
      .def_prop_ro("tasks", [](const Plan& p) {
        nb::list l;
        for (auto& t : p.tasks) {
          nb::dict d;
          d["chunks"] = nb::make_tuple(t.first_chunk, t.last_chunk);
          d["projected_bytes"] = t.projected_bytes;
          d["source_bytes"] = t.source_bytes;
          l.append(d);
        }
        return l;
      });
  m.def(
      "plan",
      [](const Array& a, std::optional<std::string> urlpath, nb::handle chunks, nb::handle blocks,
         const std::string& codec, int clevel, const std::string& filter, Context* ctx, nb::handle max_memory,
         std::optional<bool> contiguous, nb::handle shards, const std::string& compressor, nb::handle storage_options) {
        ComputeOptions o =
            compute_options(urlpath, chunks, blocks, codec, clevel, filter, max_memory, contiguous, shards, compressor);
        o.storage = b2lazy_py::store_options(storage_options);
        return interruptible([&] { return a.plan(o, ctx); });
      },
      nb::arg("a"), nb::arg("urlpath").none(), nb::arg("chunks").none(), nb::arg("blocks").none(), nb::arg("codec"),
      nb::arg("clevel"), nb::arg("filter"), nb::arg("ctx"), nb::arg("max_memory").none(), nb::arg("contiguous").none(),
      nb::arg("shards").none() = nb::none(), nb::arg("compressor") = "blosc",
      nb::arg("storage_options").none() = nb::none());
  m.def(
      "execute_plan",
      [](const Plan& plan, nb::handle out, int64_t first, int64_t last, Context* ctx, nb::object progress) {
        auto buf = nb::cast<nb::ndarray<nb::device::cpu, nb::c_contig>>(out);
        void* data = buf.data();
        EvalOptions o;
        Progress p{progress};
        o.progress = p.function();
        o.cancel = &p.stop;
        return stats_dict(interruptible([&] { return execute(plan, data, first, last, o, ctx); }, &p));
      },
      nb::arg("plan"), nb::arg("out"), nb::arg("first"), nb::arg("last"), nb::arg("ctx"), nb::arg("progress").none());
  m.def(
      "compute_plan",
      [](const Plan& plan, Context* ctx, nb::object progress) {
        EvalOptions o;
        Progress p{progress};
        o.progress = p.function();
        o.cancel = &p.stop;
        return interruptible([&] { return compute(plan, o, ctx); }, &p);
      },
      nb::arg("plan"), nb::arg("ctx"), nb::arg("progress").none());
}

void bind_cancel_at_exit(nb::module_& m) {
  // At interpreter exit (the package's atexit hook): stop the evaluations still running on
  // daemon threads and wait for their partial outputs to be removed.
  m.def("cancel_at_exit", [](double timeout_seconds) {
    g_exiting_thread = std::this_thread::get_id();
    g_exiting = true;
    bool ended;
    {
      nb::gil_scoped_release release;
      ended = cancel_evaluations(std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000)));
    }
    // A parked thread keeps its arrays: not leaks of the binding, so not reported as such.
    if (g_in_flight > 0) nb::set_leak_warnings(false);
    return ended;
  });
}

}  // namespace b2lazy_py
