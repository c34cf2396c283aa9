// Per-node state of one worker while a plan executes, keyed by node: what a node keeps
// between the output chunks of one task (a product's band of an expensive operand) and
// the values a node lends to the pulls it makes next (a mask selection's values, read by
// the mask computed from them). The execution of a plan owns one per worker; nodes ask
// for their own entry, so the executor needs to know none of them.
#pragma once
#include <cstddef>
#include <memory>
#include <unordered_map>
#include <vector>

#include "b2lazy/box.hpp"

namespace b2lazy {

class Node;

class NodeCache {
 public:
  // A node's entry: any state it defines; bytes() is reported as scratch in stats.
  struct Entry {
    virtual ~Entry() = default;
    virtual size_t bytes() const { return 0; }
  };
  // The entry of `node`, made (default-constructed T) on first use.
  template <class T> T& entry(const Node* node) {
    std::unique_ptr<Entry>& e = entries_[node];
    if (!e) e = std::make_unique<T>();
    return static_cast<T&>(*e);
  }
  // Bytes held by all entries.
  size_t bytes() const {
    size_t b = 0;
    for (auto& [n, e] : entries_) b += e->bytes();
    return b;
  }

  // Values of `node` at `region` (dense C order) lent until the matching unlend().
  void lend(const Node* node, const Region& region, const void* data) { lent_.push_back({node, region, data}); }
  void unlend() { lent_.pop_back(); }
  const void* lent(const Node* node, const Region& region) const {
    for (const auto& l : lent_)
      if (l.node == node && l.region == region) return l.data;
    return nullptr;
  }

 private:
  struct Lent {
    const Node* node;
    Region region;
    const void* data;
  };
  std::unordered_map<const Node*, std::unique_ptr<Entry>> entries_;
  std::vector<Lent> lent_;
};

}  // namespace b2lazy
