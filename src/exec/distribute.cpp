// The pieces of a plan handed to other processes (b2lazy/distribute.hpp).
#include "b2lazy/distribute.hpp"

#include <cstdio>

#include "b2lazy/driver.hpp"
#include "b2lazy/error.hpp"
#include "exec/executor.hpp"
#include "plan/memory.hpp"
#include "runtime/own_context.hpp"
#include "storage/b2nd_writer.hpp"

namespace b2lazy {

namespace {

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
  return SinkSpec{plan.root->shape(), plan.root->dtype(),   plan.chunks,
                  plan.blocks,        plan.options.urlpath, &plan.options};
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
  a.window_hits += b.window_hits;
  a.store_requests += b.store_requests;
  a.store_bytes += b.store_bytes;
  a.store_retries += b.store_retries;
  a.prefetch_hits += b.prefetch_hits;
  a.prefetch_misses += b.prefetch_misses;
  a.prefetch_reads += b.prefetch_reads;
  a.store_wait_seconds += b.store_wait_seconds;
  a.prefetch_wait_seconds += b.prefetch_wait_seconds;
  a.plan_visits = std::max(a.plan_visits, b.plan_visits);                       // each process plans the same graph
  a.peak_scratch_bytes = std::max(a.peak_scratch_bytes, b.peak_scratch_bytes);  // per process
  a.projected_peak_bytes = std::max(a.projected_peak_bytes, b.projected_peak_bytes);
  a.bytes_written += b.bytes_written;
  a.block_major_path = a.block_major_path || b.block_major_path;
  a.seconds = std::max(a.seconds, b.seconds);
}

}  // namespace b2lazy
