// Bindings of the distributed executor's pieces (b2lazy/distribute.hpp), for
// python/b2lazy/distributed.py. Each releases the GIL while it works: a dask worker's
// event loop (heartbeats) runs beside its tasks.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <b2lazy/b2lazy.hpp>

#include "bindings.hpp"

using namespace b2lazy;

namespace b2lazy_py {

namespace {
nb::bytes to_bytes(const std::vector<uint8_t>& v) { return nb::bytes(reinterpret_cast<const char*>(v.data()), v.size()); }
}  // namespace

void bind_distribute(nb::module_& m) {
  m.def("plan_fingerprint", [](const Plan& p) { return plan_fingerprint(p); });
  m.def("export_stages", [](const Plan& p, Context* ctx) {
    std::vector<uint8_t> v;
    {
      nb::gil_scoped_release release;
      v = export_stages(p, {}, ctx);
    }
    return to_bytes(v);
  }, nb::arg("plan"), nb::arg("ctx"));
  m.def("export_stages_file", [](const Plan& p, const std::string& path, Context* ctx) {
    nb::gil_scoped_release release;
    export_stages_file(p, path, {}, ctx);
  }, nb::arg("plan"), nb::arg("path"), nb::arg("ctx"));
  m.def("import_stages_file", [](Plan& p, const std::string& path) {
    nb::gil_scoped_release release;
    import_stages_file(p, path);
  });
  m.def("import_stages", [](Plan& p, nb::bytes b) {
    nb::gil_scoped_release release;  // (the bytes object stays alive: the caller holds it)
    import_stages(p, b.c_str(), b.size());
  });
  m.def("execute_part", [](const Plan& p, int64_t first, int64_t last, const std::string& staging, Context* ctx) {
    PartResult r;
    {
      nb::gil_scoped_release release;
      r = execute_part(p, first, last, staging, {}, ctx);
    }
    nb::list chunks;
    for (const CompressedChunk& c : r.chunks) chunks.append(nb::make_tuple(c.id, to_bytes(c.bytes)));
    return nb::make_tuple(chunks, stats_dict(r.stats));
  }, nb::arg("plan"), nb::arg("first"), nb::arg("last"), nb::arg("staging"), nb::arg("ctx"));
  m.def("merge_stats", [](nb::list parts) {
    Stats all;
    for (nb::handle d : parts) merge_stats(all, stats_from_dict(d));
    return stats_dict(all);
  });
  nb::class_<OutputCommitter>(m, "OutputCommitter")
      .def(nb::init<const Plan&>())
      .def_prop_ro("staging", &OutputCommitter::staging)
      .def("add", [](OutputCommitter& c, int64_t id, nb::bytes b) {
        nb::gil_scoped_release release;
        c.add(id, b.c_str(), b.size());
      })
      .def("finish", [](OutputCommitter& c, nb::handle stats) { return c.finish(stats_from_dict(stats)); });
}

}  // namespace b2lazy_py
