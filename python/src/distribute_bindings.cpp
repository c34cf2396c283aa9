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
nb::bytes to_bytes(const std::vector<uint8_t>& v) {
  return nb::bytes(reinterpret_cast<const char*>(v.data()), v.size());
}

// A piece as Python passes it: its bytes, or the path (str) of the file holding them.
PieceBytes piece_of(nb::handle h) {
  PieceBytes b;
  if (nb::isinstance<nb::str>(h)) {
    b.path = nb::cast<std::string>(h);
  } else {
    nb::bytes by = nb::cast<nb::bytes>(h);
    b.data = by.c_str();
    b.size = by.size();
  }
  return b;
}
std::vector<PieceBytes> piece_list(nb::list parts) {
  std::vector<PieceBytes> v;
  for (nb::handle h : parts) v.push_back(piece_of(h));
  return v;
}
}  // namespace

void bind_distribute(nb::module_& m) {
  m.def("plan_fingerprint", [](const Plan& p) { return plan_fingerprint(p); });
  m.def("split_stage", [](const Plan& p, size_t stage, int processes) {
    const StageSplit s = split_stage(p, stage, processes);
    return nb::make_tuple(s.pieces, s.folds);
  });
  m.def(
      "compute_stage_piece",
      [](const Plan& p, size_t stage, int64_t piece, int processes, const std::string& path, Context* ctx) {
        StagePiece r;
        {
          nb::gil_scoped_release release;
          r = compute_stage_piece(p, stage, piece, processes, path, {}, ctx);
        }
        return nb::make_tuple(to_bytes(r.bytes), stats_dict(r.stats));
      },
      nb::arg("plan"), nb::arg("stage"), nb::arg("piece"), nb::arg("processes"), nb::arg("path"), nb::arg("ctx"));
  m.def("merge_stage_pieces", [](const Plan& p, size_t stage, nb::list parts) {
    const std::vector<PieceBytes> v = piece_list(parts);
    std::vector<uint8_t> r;
    {
      nb::gil_scoped_release release;  // (the bytes objects stay alive: `parts` holds them)
      r = merge_stage_pieces(p, stage, v);
    }
    return to_bytes(r);
  });
  m.def(
      "finish_stage",
      [](const Plan& p, size_t stage, nb::list parts, const std::string& path, Context* ctx) {
        const std::vector<PieceBytes> v = piece_list(parts);
        StagePiece r;
        {
          nb::gil_scoped_release release;
          r = finish_stage(p, stage, v, path, ctx);
        }
        return nb::make_tuple(to_bytes(r.bytes), stats_dict(r.stats));
      },
      nb::arg("plan"), nb::arg("stage"), nb::arg("parts"), nb::arg("path"), nb::arg("ctx"));
  m.def("import_stage", [](Plan& p, size_t stage, nb::handle finished) {
    const PieceBytes b = piece_of(finished);
    nb::gil_scoped_release release;
    import_stage(p, stage, b);
  });
  m.def(
      "execute_part",
      [](const Plan& p, int64_t first, int64_t last, const std::string& staging, Context* ctx) {
        PartResult r;
        {
          nb::gil_scoped_release release;
          r = execute_part(p, first, last, staging, {}, ctx);
        }
        nb::list chunks;
        for (const CompressedChunk& c : r.chunks) chunks.append(nb::make_tuple(c.id, to_bytes(c.bytes)));
        return nb::make_tuple(chunks, stats_dict(r.stats));
      },
      nb::arg("plan"), nb::arg("first"), nb::arg("last"), nb::arg("staging"), nb::arg("ctx"));
  m.def("merge_stats", [](nb::list parts) {
    Stats all;
    for (nb::handle d : parts) merge_stats(all, stats_from_dict(d));
    return stats_dict(all);
  });
  nb::class_<OutputCommitter>(m, "OutputCommitter")
      .def(nb::init<const Plan&>())
      .def_prop_ro("staging", &OutputCommitter::staging)
      .def("add",
           [](OutputCommitter& c, int64_t id, nb::bytes b) {
             nb::gil_scoped_release release;
             c.add(id, b.c_str(), b.size());
           })
      .def("finish", [](OutputCommitter& c, nb::handle stats) { return c.finish(stats_from_dict(stats)); });
}

}  // namespace b2lazy_py
