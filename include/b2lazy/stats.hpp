// Work counters of one evaluation; tests assert on them.
#pragma once
#include <cstdint>
#include <map>
#include <string>

namespace b2lazy {

struct Stats {
  std::map<std::string, int64_t> chunks_decompressed;  // per source name
  int64_t chunks_decompressed_total = 0;
  // How often each source chunk was decompressed: the distinct chunks read and the most
  // reads of any one chunk, per source name.
  std::map<std::string, int64_t> distinct_chunks_decompressed;
  std::map<std::string, int64_t> max_decompressions_per_chunk;
  // Uncompressed bytes decompressed per source (a read of part of a chunk counts as a
  // decompression above but only its part here).
  std::map<std::string, int64_t> bytes_decompressed;
  int64_t output_chunks = 0;
  int64_t cache_hits = 0;
  int64_t cache_misses = 0;
  // Stored sources the plan kept (decompressed once, or re-packed) because several tasks
  // pull overlapping parts of them; reads of them count in cache_hits.
  int64_t sources_kept = 0;
  // Stages of the plan read from an earlier execution of part of its tasks instead of
  // computed again (Plan::stage_results).
  int64_t stages_reused = 0;
  // Storage blocks read from a window of decompressed blocks (Plan::windows) instead of
  // decompressed again.
  int64_t window_hits = 0;
  // Node visits of the reuse planner (src/plan/reuse.cpp), nested plans included: it
  // walks each node once per output chunk, so this grows with the distinct nodes of
  // the graph, not with its paths.
  // The byte stores the evaluation read (counted once each, their counters' growth
  // while it ran: another evaluation reading the same store at once counts here too).
  int64_t store_requests = 0;
  int64_t store_bytes = 0;
  int64_t store_retries = 0;
  double store_wait_seconds = 0;
  // Store reads through the cache of fetched bytes (runtime/fetch_cache.hpp): found there
  // (fetched ahead by the prefetch, or read before), or read by the task that needed it;
  // reads the prefetch sent, and seconds tasks waited for reads it had in flight.
  int64_t prefetch_hits = 0;
  int64_t prefetch_misses = 0;
  int64_t prefetch_reads = 0;
  double prefetch_wait_seconds = 0;
  int64_t plan_visits = 0;
  int64_t peak_scratch_bytes = 0;  // sum over threads of each thread's high-water mark
  // The memory model's projected peak (src/plan/memory.hpp), checked against max_memory
  // before any work; 0 when none was made.
  int64_t projected_peak_bytes = 0;
  int64_t bytes_written = 0;      // compressed bytes of the output
  bool block_major_path = false;  // chunks evaluated in Blosc2 block order (no reordering)
  double seconds = 0;
};

}  // namespace b2lazy
