// The pieces of a plan handed to other processes (b2lazy/distribute.hpp).
#include "b2lazy/distribute.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>

#include "b2lazy/driver.hpp"
#include "b2lazy/error.hpp"
#include "core/big_alloc.hpp"
#include "exec/executor.hpp"
#include "exec/stage_results.hpp"
#include "graph/own_context.hpp"
#include "plan/memory.hpp"
#include "storage/b2nd_source.hpp"
#include "storage/b2nd_writer.hpp"
#include "storage/buffer_source.hpp"

namespace b2lazy {

namespace {

constexpr char kStagesMagic[8] = {'B', '2', 'L', 'Z', 'S', 'T', 'G', '1'};

void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

struct Reader {
  const uint8_t* p;
  size_t left;
  uint64_t u64(const char* what) {
    if (left < 8) throw ValueError(std::string("import_stages: the bytes end inside ") + what);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
    p += 8;
    left -= 8;
    return v;
  }
  const uint8_t* take(uint64_t n, const char* what) {
    if (n > left) throw ValueError(std::string("import_stages: the bytes end inside ") + what);
    const uint8_t* q = p;
    p += n;
    left -= n;
    return q;
  }
};

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

ComputeOptions in_memory(const ComputeOptions& o) {
  ComputeOptions m = o;
  m.urlpath.clear();
  m.contiguous.reset();
  return m;
}

SinkSpec spec_of(const Plan& plan) {
  return SinkSpec{plan.root->shape(), plan.root->dtype(), plan.chunks, plan.blocks, plan.options.urlpath,
                  &plan.options};
}

}  // namespace

std::string plan_fingerprint(const Plan& plan) {
  std::string s = std::string(dtype_name(plan.root->dtype())) + shape_str(plan.root->shape()) + shape_str(plan.chunks) +
                  shape_str(plan.blocks) + (plan.block_major ? "B" : "-");
  for (const PlanStage& st : plan.stages)
    s += "|" + shape_str(st.box.shape()) + shape_str(st.chunks) + kept_in_name(st.where) + std::to_string(st.bytes);
  s += "|" + std::to_string(plan.tasks.size());
  for (const PlanTask& t : plan.tasks) s += "," + std::to_string(t.last_chunk);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(s)));
  return std::to_string(plan.stages.size()) + "s" + std::to_string(plan.tasks.size()) + "t-" + hex;
}

namespace {
// Writes the exported stages through `write` (bytes appended in order).
void export_stages_to(const Plan& plan, const EvalOptions& opts, Context* ctx,
                      const std::function<void(const void*, size_t)>& write) {
  auto own = own_context(ctx);
  check_plan_budget(plan);  // before any work
  if (!plan.stage_results) throw ValueError("export_stages: the plan keeps no stage results");
  compute_stages(plan, *ctx, opts);
  auto u64 = [&](uint64_t v) {
    std::vector<uint8_t> b;
    put_u64(b, v);
    write(b.data(), b.size());
  };
  write(kStagesMagic, 8);
  u64(plan.stages.size());
  std::lock_guard<std::mutex> g(plan.stage_results->mu);
  for (const PlanStage& s : plan.stages) {
    const Materialized& m = plan.stage_results->results.at(s.node.get());
    std::vector<uint8_t> frame;
    if (m.source->b2nd_frame(frame)) {  // kept compressed or spilled: its frame
      const uint8_t kind = 1;
      write(&kind, 1);
      u64(frame.size());
      write(frame.data(), frame.size());
      continue;
    }
    const int64_t n = m.box.size() * static_cast<int64_t>(itemsize(m.source->dtype()));
    const void* p = n ? m.source->view(Region::whole(m.source->shape())) : nullptr;
    if (n && !p) throw ValueError("export_stages: stage " + m.source->describe() + " is neither dense nor compressed");
    const uint8_t kind = 0;
    write(&kind, 1);
    u64(static_cast<uint64_t>(n));
    write(p, static_cast<size_t>(n));
  }
}
}  // namespace

std::vector<uint8_t> export_stages(const Plan& plan, const EvalOptions& opts, Context* ctx) {
  std::vector<uint8_t> out;
  export_stages_to(plan, opts, ctx, [&](const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  });
  return out;
}

void export_stages_file(const Plan& plan, const std::string& path, const EvalOptions& opts, Context* ctx) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw IOError("cannot create '" + tmp + "' (" + std::strerror(errno) + ")");
  try {
    export_stages_to(plan, opts, ctx, [&](const void* p, size_t n) {
      if (n && std::fwrite(p, 1, n, f) != n) throw IOError("cannot write '" + tmp + "' (" + std::strerror(errno) + ")");
    });
    if (std::fclose(f) != 0) {
      f = nullptr;
      throw IOError("cannot write '" + tmp + "' (" + std::strerror(errno) + ")");
    }
    f = nullptr;
    if (std::rename(tmp.c_str(), path.c_str()) != 0)  // whole or absent: a retried task writes it again
      throw IOError("cannot rename '" + tmp + "' to '" + path + "' (" + std::strerror(errno) + ")");
  } catch (...) {
    if (f) std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
}

void import_stages_file(Plan& plan, const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IOError("cannot open exported stages '" + path + "' (" + std::strerror(errno) + ")");
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_size <= 0) {
    ::close(fd);
    throw IOError("exported stages '" + path + "' are empty or unreadable");
  }
  const size_t n = static_cast<size_t>(st.st_size);
  void* m = ::mmap(nullptr, n, PROT_READ, MAP_PRIVATE, fd, 0);  // read in place: no copy of the whole file
  ::close(fd);
  if (m == MAP_FAILED) throw IOError("cannot map exported stages '" + path + "' (" + std::strerror(errno) + ")");
  try {
    import_stages(plan, m, n);
  } catch (...) {
    ::munmap(m, n);
    throw;
  }
  ::munmap(m, n);
}

void import_stages(Plan& plan, const void* data, size_t nbytes) {
  Reader r{static_cast<const uint8_t*>(data), nbytes};
  if (std::memcmp(r.take(8, "its header"), kStagesMagic, 8) != 0)
    throw ValueError("import_stages: these bytes are not exported stages");
  const uint64_t n = r.u64("the stage count");
  if (n != plan.stages.size())
    throw ValueError("import_stages: " + std::to_string(n) + " stages exported, the plan has " +
                     std::to_string(plan.stages.size()) + " (not the same plan)");
  auto results = std::make_shared<StageResults>();
  for (const PlanStage& s : plan.stages) {
    const uint8_t kind = *r.take(1, "a stage's kind");
    const uint64_t len = r.u64("a stage's length");
    const uint8_t* p = r.take(len, "a stage");
    Materialized m;
    m.box = s.box;
    const Shape shape = s.box.shape();
    if (kind == 1) {
      auto src = B2ndSource::from_cframe(p, static_cast<int64_t>(len));
      if (src->shape() != shape || src->dtype() != s.computed->dtype())
        throw ValueError("import_stages: a stage of shape " + shape_str(src->shape()) + " where the plan keeps " +
                         shape_str(shape));
      m.source = src;
    } else if (kind == 0) {
      if (static_cast<int64_t>(len) != s.bytes)
        throw ValueError("import_stages: a stage of " + std::to_string(len) + " bytes where the plan keeps " +
                         std::to_string(s.bytes));
      auto buf = std::shared_ptr<unsigned char[]>(static_cast<unsigned char*>(alloc_big(len ? len : 1)), BigDeleter{});
      if (len) std::memcpy(buf.get(), p, len);
      m.source = std::make_shared<BufferSource>(buf.get(), s.computed->dtype(), shape, Shape{},
                                                std::shared_ptr<const void>(buf, buf.get()), "stage");
    } else {
      throw ValueError("import_stages: unknown stage kind " + std::to_string(kind));
    }
    results->results[s.node.get()] = std::move(m);
  }
  if (r.left) throw ValueError("import_stages: " + std::to_string(r.left) + " bytes after the last stage");
  results->ready = true;
  plan.stage_results = std::move(results);
}

PartResult execute_part(const Plan& plan, int64_t first_task, int64_t last_task, const std::string& staging,
                        const EvalOptions& opts, Context* ctx) {
  auto own = own_context(ctx);
  if (plan.target != PlanTarget::Compressed)
    throw ValueError("execute_part: the plan writes a dense buffer; make it with compute's options");
  check_plan_budget(plan);
  PartResult out;
  Target t;
  std::unique_ptr<Sink> sink;
  if (!staging.empty()) {
    sink = create_part_sink(spec_of(plan), staging);
  } else {  // compressed here, as the output stores them, in an in-memory copy of its layout
    const ComputeOptions mem = in_memory(plan.options);
    sink = std::make_unique<B2ndWriter>(plan.root->shape(), plan.root->dtype(), plan.chunks, plan.blocks, mem);
  }
  t.writer = sink.get();
  out.stats = execute_plan(plan, t, first_task, last_task, *ctx, opts);
  out.stats.projected_peak_bytes = plan.projected_peak;
  if (staging.empty())
    for (int64_t k = first_task; k < last_task; ++k)
      for (int64_t id = plan.tasks[k].first_chunk; id < plan.tasks[k].last_chunk; ++id)
        out.chunks.push_back({id, sink->compressed_chunk(id)});
  return out;
}

OutputCommitter::OutputCommitter(const Plan& plan) : plan_(std::make_shared<const Plan>(plan)) {
  if (plan.target != PlanTarget::Compressed)
    throw ValueError("OutputCommitter: the plan writes a dense buffer; make it with compute's options");
  check_plan_budget(plan);
  sink_ = create_sink(spec_of(plan));
  staging_ = sink_->staging_path();
  added_.assign(static_cast<size_t>(plan.nchunks), false);
}

OutputCommitter::~OutputCommitter() = default;  // the sink removes an unfinished output

void OutputCommitter::add(int64_t id, const void* data, size_t nbytes) {
  if (!sink_) throw ValueError("OutputCommitter: already finished");
  sink_->write_compressed(id, data, nbytes);
  added_[static_cast<size_t>(id)] = true;
}

Array OutputCommitter::finish(Stats stats) {
  if (!sink_) throw ValueError("OutputCommitter: already finished");
  if (staging_.empty())
    for (size_t id = 0; id < added_.size(); ++id)
      if (!added_[id])
        throw ValueError("OutputCommitter: chunk " + std::to_string(id) + " of " + std::to_string(added_.size()) +
                         " was never added; the output is not complete");
  stats.projected_peak_bytes = plan_->projected_peak;
  Array r(sink_->finish());
  // Chunks the workers wrote into the staging directory are counted in their stats (with
  // the metadata this sink wrote); chunks sent here are counted here.
  stats.bytes_written = staging_.empty() ? sink_->bytes_written() : stats.bytes_written + sink_->bytes_written();
  sink_.reset();
  r.stats_ = std::make_shared<const Stats>(std::move(stats));
  auto shown = std::make_shared<Plan>(*plan_);
  shown->stage_results.reset();
  r.plan_ = std::move(shown);
  return r;
}

void merge_stats(Stats& a, const Stats& b) {
  for (const auto& [k, v] : b.chunks_decompressed) a.chunks_decompressed[k] += v;
  a.chunks_decompressed_total += b.chunks_decompressed_total;
  for (const auto& [k, v] : b.distinct_chunks_decompressed) a.distinct_chunks_decompressed[k] += v;
  for (const auto& [k, v] : b.max_decompressions_per_chunk)
    a.max_decompressions_per_chunk[k] = std::max(a.max_decompressions_per_chunk[k], v);
  for (const auto& [k, v] : b.bytes_decompressed) a.bytes_decompressed[k] += v;
  a.output_chunks += b.output_chunks;
  a.cache_hits += b.cache_hits;
  a.cache_misses += b.cache_misses;
  a.sources_kept += b.sources_kept;
  a.stages_reused += b.stages_reused;
  a.plan_visits = std::max(a.plan_visits, b.plan_visits);  // each process plans the same graph
  a.peak_scratch_bytes = std::max(a.peak_scratch_bytes, b.peak_scratch_bytes);  // per process
  a.projected_peak_bytes = std::max(a.projected_peak_bytes, b.projected_peak_bytes);
  a.bytes_written += b.bytes_written;
  a.block_major_path = a.block_major_path || b.block_major_path;
  a.seconds = std::max(a.seconds, b.seconds);
}

}  // namespace b2lazy
