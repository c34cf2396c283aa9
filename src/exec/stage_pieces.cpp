// A plan's stages computed in pieces by several processes (b2lazy/distribute.hpp).
//
// A piece holds entries, one per cell of the stage — a chunk, or for a small dense stage
// a part of a chunk cut along its first axis longer than 1: the cell's values (dense
// stage), its compressed form (a stage kept compressed or spilled), or the partial state
// of its fold over a range of the input (folding stages). Layout, little-endian u64:
//   "B2LZPCE1" | stage | folds | pieces (of the split) | cells per chunk |
//   covered (pieces merged in) | entries | { cell id | length | bytes } ...
// A finished stage: a 64-byte header ("B2LZSTG2" | stage | kind | length), then a dense
// stage's values (kind 0, read in place from a mapped file) or a compressed stage's b2nd
// frame (kind 1); or, spilled to a path, that b2nd file itself.
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include "b2lazy/distribute.hpp"
#include "b2lazy/error.hpp"
#include "core/big_alloc.hpp"
#include "core/strided_copy.hpp"
#include "exec/byte_io.hpp"
#include "exec/eval_state.hpp"
#include "exec/executor.hpp"
#include "plan/memory.hpp"
#include "plan/tasks.hpp"
#include "runtime/own_context.hpp"
#include "runtime/scratch.hpp"
#include "runtime/stage_results.hpp"
#include "runtime/thread_state.hpp"
#include "storage/b2nd_source.hpp"
#include "storage/b2nd_writer.hpp"
#include "storage/buffer_source.hpp"

namespace b2lazy {

namespace {

using byte_io::put_u64;

constexpr char kPieceMagic[8] = {'B', '2', 'L', 'Z', 'P', 'C', 'E', '1'};
constexpr char kStageMagic[8] = {'B', '2', 'L', 'Z', 'S', 'T', 'G', '2'};
constexpr size_t kStageHeader = 64;  // a dense stage's values start aligned in a mapped file

const PlanStage& stage_at(const Plan& plan, size_t stage) {
  if (stage >= plan.stages.size())
    throw IndexError("stage " + std::to_string(stage) + " of a plan with " + std::to_string(plan.stages.size()) +
                     " stages");
  return plan.stages[stage];
}

std::string stage_name(const Plan& plan, size_t stage) {
  return "stage " + std::to_string(stage) + " (" + plan.stages[stage].node->kind() + " " +
         shape_str(plan.stages[stage].box.shape()) + ")";
}

ChunkGrid stage_grid(const PlanStage& s) { return ChunkGrid(s.computed->shape(), s.chunks); }
int64_t stage_chunks(const PlanStage& s) { return s.computed->size() == 0 ? 0 : stage_grid(s).nchunks(); }

// The axis a stage's chunks are cut into cells along: chunk 0's first longer than 1.
int cell_axis(const PlanStage& s) {
  const Shape c = stage_grid(s).chunk_box(0).shape();
  for (size_t d = 0; d < c.size(); ++d)
    if (c[d] > 1) return static_cast<int>(d);
  return -1;
}

// The box of cell `cell` (chunk cell / cells, its part cell % cells along cell_axis).
Box cell_box(const PlanStage& s, int64_t cells, int64_t cell) {
  Box b = stage_grid(s).chunk_box(cell / cells);
  if (cells > 1) {
    const size_t d = static_cast<size_t>(cell_axis(s));
    const int64_t len = b.stop[d] - b.start[d], j = cell % cells;
    b.stop[d] = b.start[d] + len * (j + 1) / cells;
    b.start[d] += len * j / cells;
  }
  return b;
}

// The fold axis shared by every chunk of the stage, or extent 0.
Node::FoldAxis stage_fold_axis(const PlanStage& s) {
  const ChunkGrid grid = stage_grid(s);
  Node::FoldAxis f;
  for (int64_t id = 0; id < stage_chunks(s); ++id) {
    const Node::FoldAxis c = s.computed->fold_axis(Region::from_box(grid.chunk_box(id)));
    if (c.extent == 0 || (id > 0 && (c.axis != f.axis || c.extent != f.extent || c.align != f.align))) return {};
    f = c;
  }
  return f;
}

// [lo, hi) of `units` for piece k of n (balanced, in order).
std::pair<int64_t, int64_t> share(int64_t units, int64_t k, int64_t n) { return {units * k / n, units * (k + 1) / n}; }

// The stages before `stage`, as imported into the plan.
std::unordered_map<const Node*, Materialized> stages_before(const Plan& plan, size_t stage) {
  if (!plan.stage_results) throw ValueError("the plan keeps no stage results");
  std::lock_guard<std::mutex> g(plan.stage_results->mu);
  const auto& have = plan.stage_results->results;
  for (size_t j = 0; j < stage; ++j)
    if (!have.count(plan.stages[j].node.get()))
      throw ValueError(stage_name(plan, stage) + " needs " + stage_name(plan, j) + ", which is not imported yet");
  return have;
}

// The pieces (merged or not) of one stage, read: views into them, or merged fold states.
struct Gathered {
  bool folds = false;
  int64_t pieces = 0, cells = 1, covered = 0;
  std::map<int64_t, std::pair<const uint8_t*, size_t>> entries;  // by chunk id
  std::map<int64_t, std::vector<uint8_t>> states;                // folds: merged here
  std::vector<std::shared_ptr<const void>> keep;                 // mapped files
  std::vector<std::pair<const uint8_t*, size_t>> maps;           // ...and where they are
  bool in_map(const uint8_t* p) const {
    for (const auto& [m, n] : maps)
      if (p >= m && p < m + n) return true;
    return false;
  }
};

Gathered gather(const Plan& plan, size_t stage, const std::vector<PieceBytes>& parts) {
  const PlanStage& s = stage_at(plan, stage);
  const ChunkGrid grid = stage_grid(s);
  Gathered g;
  bool first = true;
  for (const PieceBytes& part : parts) {
    const uint8_t* data = static_cast<const uint8_t*>(part.data);
    size_t size = part.size;
    if (!part.path.empty()) {
      byte_io::Mapped m = byte_io::map_file(part.path, "stage piece");
      data = m.data, size = m.size;
      g.keep.push_back(m.keep);
      g.maps.emplace_back(m.data, m.size);
    }
    byte_io::Reader r{data, size, "a stage piece"};
    if (std::memcmp(r.take(8, "its header"), kPieceMagic, 8) != 0)
      throw ValueError("these bytes are not a piece of a stage");
    const uint64_t st = r.u64("its stage"), folds = r.u64("its kind"), pieces = r.u64("its split");
    const uint64_t cells = r.u64("its cells");
    if (st != stage)
      throw ValueError("a piece of stage " + std::to_string(st) + " given for " + stage_name(plan, stage));
    if (!first && (static_cast<bool>(folds) != g.folds || static_cast<int64_t>(pieces) != g.pieces ||
                   static_cast<int64_t>(cells) != g.cells))
      throw ValueError(stage_name(plan, stage) + ": pieces of different splits");
    if (cells < 1 || cells > (uint64_t(1) << 32) || (cells > 1 && (folds || s.where != KeptIn::Dense)))
      throw ValueError(stage_name(plan, stage) + ": a piece of " + std::to_string(cells) + " cells per chunk");
    first = false;
    g.folds = folds != 0;
    g.pieces = static_cast<int64_t>(pieces);
    g.cells = static_cast<int64_t>(cells);
    g.covered += static_cast<int64_t>(r.u64("its coverage"));
    const uint64_t n = r.u64("its entry count");
    for (uint64_t e = 0; e < n; ++e) {
      const int64_t id = static_cast<int64_t>(r.u64("an entry's chunk"));
      const uint64_t len = r.u64("an entry's length");
      const uint8_t* p = r.take(len, "an entry");
      if (id < 0 || id >= stage_chunks(s) * g.cells)
        throw ValueError(stage_name(plan, stage) + ": a piece holds cell " + std::to_string(id) + " of " +
                         std::to_string(stage_chunks(s) * g.cells));
      if (!g.folds) {
        if (!g.entries.emplace(id, std::make_pair(p, static_cast<size_t>(len))).second)
          throw ValueError(stage_name(plan, stage) + ": cell " + std::to_string(id) + " is in two pieces");
        continue;
      }
      auto it = g.states.find(id);
      if (it == g.states.end()) g.states.emplace(id, std::vector<uint8_t>(p, p + len));
      else s.computed->fold_merge(Region::from_box(grid.chunk_box(id)), it->second, p, static_cast<size_t>(len));
    }
    if (r.left) throw ValueError("a stage piece: " + std::to_string(r.left) + " bytes after its last entry");
  }
  if (g.folds)
    for (auto& [id, st] : g.states) g.entries[id] = {st.data(), st.size()};
  return g;
}

using Append = std::function<void(const void*, size_t)>;

void write_piece_header(const Append& out, size_t stage, bool folds, int64_t pieces, int64_t cells, int64_t covered,
                        uint64_t entries) {
  std::vector<uint8_t> h(kPieceMagic, kPieceMagic + 8);
  for (uint64_t v : {uint64_t(stage), uint64_t(folds), uint64_t(pieces), uint64_t(cells), uint64_t(covered), entries})
    put_u64(h, v);
  out(h.data(), h.size());
}

void write_piece_entry(const Append& out, int64_t id, const void* data, size_t n) {
  std::vector<uint8_t> eh;
  put_u64(eh, static_cast<uint64_t>(id));
  put_u64(eh, n);
  out(eh.data(), eh.size());
  out(data, n);
}

void write_piece(const Append& out, size_t stage, bool folds, int64_t pieces, int64_t cells, int64_t covered,
                 const std::map<int64_t, std::pair<const uint8_t*, size_t>>& entries) {
  write_piece_header(out, stage, folds, pieces, cells, covered, entries.size());
  for (const auto& [id, e] : entries) write_piece_entry(out, id, e.first, e.second);
}

// Bytes, or a file at `path` (then no bytes).
std::vector<uint8_t> emit(const std::string& path, const std::function<void(const Append&)>& write) {
  std::vector<uint8_t> bytes;
  if (!path.empty()) {
    byte_io::write_file_atomic(path, write);
    return bytes;
  }
  write([&](const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    bytes.insert(bytes.end(), b, b + n);
  });
  return bytes;
}

std::vector<uint8_t> stage_header(size_t stage, uint64_t kind, uint64_t nbytes) {
  std::vector<uint8_t> h(kStageMagic, kStageMagic + 8);
  put_u64(h, stage);
  put_u64(h, kind);
  put_u64(h, nbytes);
  h.resize(kStageHeader, 0);
  return h;
}

// Copies a box's dense values (C order) into its place in a dense stage.
void place(const PlanStage& s, const Box& box, const void* values, void* stage) {
  const size_t isz = itemsize(s.computed->dtype());
  const Shape full = s.computed->shape(), bs = box.shape();
  const Shape st = byte_strides(full, isz), src_st = byte_strides(bs, isz);
  char* dst = static_cast<char*>(stage);
  for (size_t d = 0; d < full.size(); ++d) dst += box.start[d] * st[d];
  copy_strided(bs.size(), bs.data(), static_cast<const char*>(values), src_st.data(), dst, st.data(), isz);
}

}  // namespace

StageSplit split_stage(const Plan& plan, size_t stage, int processes) {
  const PlanStage& s = stage_at(plan, stage);
  const int64_t want = 2 * static_cast<int64_t>(std::max(1, processes));  // two per process: some balance
  const int64_t nch = stage_chunks(s);
  StageSplit sp;
  if (nch < want) {  // few chunks: cut the input the node folds instead, when it does
    const Node::FoldAxis f = stage_fold_axis(s);
    const int64_t units = f.extent ? ceil_div(f.extent, f.align) : 0;
    if (units > nch) {
      sp.folds = true;
      sp.pieces = std::min(units, want);
      return sp;
    }
  }
  const int axis = nch ? cell_axis(s) : -1;
  if (nch && nch < want && s.where == KeptIn::Dense && axis >= 0) {  // small and dense: cells of chunks
    const int64_t len = stage_grid(s).chunk_box(0).shape()[static_cast<size_t>(axis)];
    sp.cells = std::min(len, want / nch);
    if (sp.cells > 1) {
      sp.pieces = nch * sp.cells;  // one cell each
      return sp;
    }
    sp.cells = 1;
  }
  // Ranges of chunks, cut where the stage's own tasks are (a product's row of chunks
  // whole), or ranges of the groups it is filled in.
  const int64_t per = nch ? chunks_per_task(*s.computed, stage_grid(s), 1) : 1;
  const ChunkGrid grid = stage_grid(s);
  const int64_t units = nch && !s.fill_group.empty() ? ChunkGroups(grid, s.fill_group).count() : ceil_div(nch, per);
  sp.pieces = std::max<int64_t>(1, std::min(units, want));
  return sp;
}

StagePiece compute_stage_piece(const Plan& plan, size_t stage, int64_t piece, int processes, const std::string& path,
                               const EvalOptions& opts, Context* ctx) {
  auto own = own_context(ctx);
  check_plan_budget(plan);  // before any work
  const PlanStage& s = stage_at(plan, stage);
  const StageSplit sp = split_stage(plan, stage, processes);
  if (piece < 0 || piece >= sp.pieces)
    throw IndexError(stage_name(plan, stage) + " has " + std::to_string(sp.pieces) + " pieces, not piece " +
                     std::to_string(piece));
  EvalState ev(*ctx, plan.working_memory());
  ev.cancel = opts.cancel;
  ev.materialized = stages_before(plan, stage);
  const NodePtr& sub = s.computed;
  const ChunkGrid grid = stage_grid(s);
  const int64_t nch = stage_chunks(s);
  std::vector<std::vector<uint8_t>> values;
  std::vector<int64_t> ids;  // the cell of each of `values`: c0, c0 + 1, ... unless filled in groups
  int64_t c0 = 0, c1 = nch;
  if (sp.folds) {  // every chunk, over this piece's range of the fold axis
    const Node::FoldAxis f = stage_fold_axis(s);
    auto [u0, u1] = share(ceil_div(f.extent, f.align), piece, sp.pieces);
    const int64_t lo = u0 * f.align, hi = std::min(f.extent, u1 * f.align);
    for (int64_t id = 0; id < nch; ++id) {
      ev.check_cancel();
      values.push_back(sub->fold_part(Region::from_box(grid.chunk_box(id)), lo, hi, ev.main()));
    }
  } else if (sp.cells > 1) {  // one cell of a chunk
    c0 = piece, c1 = piece + 1;
    const Box box = cell_box(s, sp.cells, piece);
    values.emplace_back(static_cast<size_t>(box.size()) * itemsize(sub->dtype()));
    if (box.size()) sub->pull(Region::from_box(box), values[0].data(), ev.main());
  } else {
    // Ranges of chunks, or of the groups the stage is filled in (each pulled whole).
    const bool grouped = nch && !s.fill_group.empty();
    std::optional<ChunkGroups> groups;
    int64_t g0 = 0, g1 = 0;
    if (grouped) {
      groups.emplace(grid, s.fill_group);
      std::tie(g0, g1) = share(groups->count(), piece, sp.pieces);
    } else {
      const int64_t per = nch ? chunks_per_task(*sub, grid, 1) : 1;
      auto [u0, u1] = share(ceil_div(nch, per), piece, sp.pieces);
      c0 = std::min(nch, u0 * per), c1 = std::min(nch, u1 * per);
    }
    std::unique_ptr<B2ndWriter> w = s.where == KeptIn::Dense && !grouped ? nullptr : stage_writer(s, "");
    const size_t isz = itemsize(sub->dtype());
    // A compressed stage's piece to a file is written entry by entry as chunks are made:
    // the piece never holds all its chunks (a 512 MiB stage over 4 pieces held 100 MiB
    // of them per worker, twice with the writer's frame).
    const bool stream = w && !path.empty();
    std::mutex mu;
    Append sink;
    auto made = [&](int64_t id, const void* v, ThreadState& ts) {  // a chunk of a compressed stage
      std::vector<uint8_t> c = w->compress_chunk(id, v, ts);
      std::lock_guard<std::mutex> g(mu);
      if (!stream) {
        ids.push_back(id), values.push_back(std::move(c));
        return;
      }
      write_piece_entry(sink, id, c.data(), c.size());
    };
    auto run = [&] {
      if (grouped) {
        ev.parallel_for(g1 - g0, [&](int64_t i, int, ThreadState& ts) {
          ev.check_cancel();
          pull_group(*sub, *groups, g0 + i, grid, ts, [&](int64_t id, const void* v) { made(id, v, ts); });
        });
        return;
      }
      if (!w) {
        values.resize(static_cast<size_t>(c1 - c0));
        for (int64_t id = c0; id < c1; ++id)
          values[static_cast<size_t>(id - c0)].resize(static_cast<size_t>(grid.chunk_box(id).size()) * isz);
      }
      auto one = [&](int64_t id, ThreadState& ts) {
        ev.check_cancel();
        const Box box = grid.chunk_box(id);
        if (!w) return sub->pull(Region::from_box(box), values[static_cast<size_t>(id - c0)].data(), ts);
        ScratchScope scope(ts.scratch);
        void* buf = scope.alloc(static_cast<size_t>(box.size()) * isz);
        sub->pull(Region::from_box(box), buf, ts);
        made(id, buf, ts);
      };
      if (c1 - c0 == 1) one(c0, ev.main());  // alone: free to fork inside the node
      else ev.parallel_for(c1 - c0, [&](int64_t i, int, ThreadState& ts) { one(c0 + i, ts); });
    };
    if (stream) {
      int64_t count = c1 - c0;  // the entries the header announces
      if (grouped) {
        count = 0;
        for (int64_t k = g0; k < g1; ++k) count += static_cast<int64_t>(groups->chunks(k).size());
      }
      StagePiece out;
      emit(path, [&](const Append& a) {
        sink = a;
        write_piece_header(a, stage, sp.folds, sp.pieces, sp.cells, 1, static_cast<uint64_t>(count));
        run();
      });
      ev.collect(out.stats);
      return out;
    }
    run();
  }
  std::map<int64_t, std::pair<const uint8_t*, size_t>> entries;
  for (size_t i = 0; i < values.size(); ++i)
    entries[ids.empty() ? c0 + static_cast<int64_t>(i) : ids[i]] = {values[i].data(), values[i].size()};
  StagePiece out;
  out.bytes = emit(path, [&](const Append& a) { write_piece(a, stage, sp.folds, sp.pieces, sp.cells, 1, entries); });
  ev.collect(out.stats);
  return out;
}

std::vector<uint8_t> merge_stage_pieces(const Plan& plan, size_t stage, const std::vector<PieceBytes>& parts) {
  const Gathered g = gather(plan, stage, parts);
  return emit({}, [&](const Append& a) { write_piece(a, stage, g.folds, g.pieces, g.cells, g.covered, g.entries); });
}

StagePiece finish_stage(const Plan& plan, size_t stage, const std::vector<PieceBytes>& parts, const std::string& path,
                        Context* ctx) {
  auto own = own_context(ctx);
  const PlanStage& s = stage_at(plan, stage);
  const Gathered g = gather(plan, stage, parts);
  const int64_t nch = stage_chunks(s);
  if (g.folds && g.covered != g.pieces)
    throw ValueError(stage_name(plan, stage) + ": " + std::to_string(g.covered) + " of its " +
                     std::to_string(g.pieces) + " pieces given");
  for (int64_t id = 0; id < nch * g.cells; ++id)
    if (!g.entries.count(id))
      throw ValueError(stage_name(plan, stage) + ": " + (g.cells > 1 ? "cell " : "chunk ") + std::to_string(id) +
                       " of " + std::to_string(nch * g.cells) + " is in none of the pieces given");
  const NodePtr& sub = s.computed;
  const ChunkGrid grid = stage_grid(s);
  const size_t isz = itemsize(sub->dtype());
  StagePiece out;
  if (s.source) out.stats.sources_kept = 1;
  else out.stats.cache_misses = 1;
  // A fold's chunk finished into `buf` (its box's values).
  auto finished = [&](int64_t id, std::vector<uint8_t>& buf) {
    const Region r = Region::from_box(grid.chunk_box(id));
    buf.resize(static_cast<size_t>(r.size()) * isz);
    const auto& e = g.entries.at(id);
    sub->fold_finish(r, e.first, e.second, buf.data());
  };
  if (s.where == KeptIn::Dense) {
    const size_t bytes = static_cast<size_t>(s.bytes);
    BigBuffer buf = make_big(bytes ? bytes : 1);
    std::vector<uint8_t> tmp;
    for (const auto& [id, e] : g.entries) {
      const void* values = e.first;
      const Box box = cell_box(s, g.cells, id);
      if (g.folds) finished(id, tmp), values = tmp.data();
      else if (e.second != static_cast<size_t>(box.size()) * isz)
        throw ValueError(stage_name(plan, stage) + ": cell " + std::to_string(id) + " has " + std::to_string(e.second) +
                         " bytes");
      place(s, box, values, buf.get());
    }
    out.bytes = emit(path, [&](const Append& a) {
      const std::vector<uint8_t> h = stage_header(stage, 0, bytes);
      a(h.data(), h.size());
      a(buf.get(), bytes);
    });
    return out;
  }
  const bool to_file = s.where == KeptIn::Spilled && !path.empty();
  std::unique_ptr<B2ndWriter> w = stage_writer(s, to_file ? path : std::string());
  EvalState ev(*ctx, plan.working_memory());
  std::vector<uint8_t> tmp;
  for (const auto& [id, e] : g.entries) {
    if (!g.folds) {
      w->write_compressed(id, e.first, e.second);
      if (g.in_map(e.first)) byte_io::release(e.first, e.second);  // read once: its pages leave this process
      continue;
    }
    finished(id, tmp);
    w->write_chunk(id, tmp.data(), ev.main());
  }
  std::shared_ptr<B2ndSource> src = w->finish_source("stage");
  if (to_file) return out;  // the b2nd file at `path` is the stage
  std::vector<uint8_t> frame;
  if (!src->b2nd_frame(frame)) throw Error("internal: a compressed stage without a frame");
  out.bytes = emit(path, [&](const Append& a) {
    const std::vector<uint8_t> h = stage_header(stage, 1, frame.size());
    a(h.data(), h.size());
    a(frame.data(), frame.size());
  });
  return out;
}

void import_stage(Plan& plan, size_t stage, const PieceBytes& finished) {
  const PlanStage& s = stage_at(plan, stage);
  const Shape shape = s.box.shape();
  Materialized m;
  m.box = s.box;
  const uint8_t* data = static_cast<const uint8_t*>(finished.data);
  size_t size = finished.size;
  std::shared_ptr<const void> keep;
  if (!finished.path.empty()) {
    byte_io::Mapped f = byte_io::map_file(finished.path, "finished stage");
    data = f.data, size = f.size, keep = f.keep;
  }
  if (!finished.path.empty() && (size < 8 || std::memcmp(data, kStageMagic, 8) != 0)) {
    keep.reset();  // a spilled stage: the b2nd file itself
    m.source = B2ndSource::open(finished.path, "stage");
  } else {
    byte_io::Reader r{data, size, "a finished stage"};
    if (std::memcmp(r.take(8, "its header"), kStageMagic, 8) != 0)
      throw ValueError("these bytes are not a finished stage");
    const uint64_t st = r.u64("its stage"), kind = r.u64("its kind"), len = r.u64("its length");
    r.take(kStageHeader - 32, "its header");
    if (st != stage) throw ValueError("finished stage " + std::to_string(st) + " given for " + stage_name(plan, stage));
    const uint8_t* p = r.take(len, "its values");
    if (kind == 1) {
      m.source = B2ndSource::from_cframe(p, static_cast<int64_t>(len));
    } else if (kind == 0) {
      if (static_cast<int64_t>(len) != s.bytes)
        throw ValueError(stage_name(plan, stage) + ": " + std::to_string(len) + " bytes where the plan keeps " +
                         std::to_string(s.bytes));
      if (!keep) {  // bytes the caller owns: copied
        auto buf =
            std::shared_ptr<unsigned char[]>(static_cast<unsigned char*>(alloc_big(len ? len : 1)), BigDeleter{});
        if (len) std::memcpy(buf.get(), p, len);
        keep = std::shared_ptr<const void>(buf, buf.get());
        p = buf.get();
      }
      m.source = std::make_shared<BufferSource>(p, s.computed->dtype(), shape, Shape{}, keep, "stage");
    } else {
      throw ValueError("finished stage of unknown kind " + std::to_string(kind));
    }
  }
  if (m.source->shape() != shape || m.source->dtype() != s.computed->dtype())
    throw ValueError(stage_name(plan, stage) + ": given one of shape " + shape_str(m.source->shape()) + " " +
                     dtype_name(m.source->dtype()));
  if (!plan.stage_results) plan.stage_results = std::make_shared<StageResults>();
  StageResults& kept = *plan.stage_results;
  std::lock_guard<std::mutex> g(kept.mu);
  kept.results[s.node.get()] = std::move(m);
  kept.ready = kept.results.size() == plan.stages.size();
}

}  // namespace b2lazy
