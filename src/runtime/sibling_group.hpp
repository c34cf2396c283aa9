// Sibling reductions evaluated in lockstep (Plan::siblings): reductions over the same axes
// of inputs that read the same stored sources. The first member filled for a region folds
// every member over the same slabs, each source slab decompressed once and lent to all of
// them; the others' results wait here until their own fill of that region takes them.
#pragma once
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "b2lazy/node.hpp"

namespace b2lazy {

class SiblingGroup {
 public:
  SiblingGroup(std::vector<const Node*> members, std::vector<NodePtr> shared, size_t most_bytes)
      : members(std::move(members)), shared(std::move(shared)), most_(most_bytes) {}
  const std::vector<const Node*> members;
  const std::vector<NodePtr> shared;  // the stored sources pulled once per slab, lent to all

  // Copies the waiting result of `node` at `region` into `out` (then forgotten): false when
  // none waits.
  bool take(const Node* node, const Region& region, void* out) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = done_.find({node, key(region)});
    if (it == done_.end()) return false;
    std::memcpy(out, it->second.data(), it->second.size());
    held_ -= it->second.size();
    done_.erase(it);
    return true;
  }
  // Room for `bytes` of results to wait, reserved (false: over the group's share of memory;
  // then the member is filled alone).
  bool reserve(size_t bytes) {
    std::lock_guard<std::mutex> g(mu_);
    if (held_ + bytes > most_) return false;
    held_ += bytes;
    return true;
  }
  // A reserved result of `node` at `region`, waiting for its fill.
  void put(const Node* node, const Region& region, std::vector<uint8_t> values) {
    std::lock_guard<std::mutex> g(mu_);
    auto [it, fresh] = done_.try_emplace({node, key(region)}, std::move(values));
    if (!fresh) held_ -= it->second.size();  // (the same region folded twice: one kept)
  }
  void release(size_t bytes) {
    std::lock_guard<std::mutex> g(mu_);
    held_ -= bytes;
  }

 private:
  static std::vector<int64_t> key(const Region& r) {
    std::vector<int64_t> k(r.start);
    k.insert(k.end(), r.step.begin(), r.step.end());
    k.insert(k.end(), r.count.begin(), r.count.end());
    return k;
  }
  std::mutex mu_;
  size_t most_ = 0, held_ = 0;
  std::map<std::pair<const Node*, std::vector<int64_t>>, std::vector<uint8_t>> done_;
};

}  // namespace b2lazy
