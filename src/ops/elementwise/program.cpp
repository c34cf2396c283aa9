#include "ops/elementwise/program.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>
#include <unordered_map>

#include "b2lazy/error.hpp"
#include "ops/elementwise/elementwise_node.hpp"
#include "runtime/scratch.hpp"
#include "storage/buffer_source.hpp"

namespace b2lazy {

namespace {

kernels::BlockFn kernel_for(Op op, DType t, DType from) {
  kernels::BlockFn fn = op == Op::Cast ? kernels::lookup_cast(from, t) : kernels::lookup(op, t);
  if (!fn) throw TypeError(std::string("no kernel for ") + op_name(op) + " on " + dtype_name(t));
  return fn;
}

class Compiler {
 public:
  Program p;

  int visit(const NodePtr& n) {
    auto it = memo_.find(n.get());
    if (it != memo_.end()) return it->second;
    int r;
    if (auto* c = dynamic_cast<const ConstantNode*>(n.get())) {
      r = constant(n->dtype(), c->value());
    } else if (auto* e = dynamic_cast<const ElementwiseNode*>(n.get())) {
      std::vector<int> srcs;
      for (auto& in : n->inputs()) srcs.push_back(visit(in));
      r = instr(e->op(), e->compute_dtype(), srcs);
    } else {
      r = add_reg({Program::RegKind::Leaf, n->dtype(), static_cast<int>(p.leaves.size())});
      p.leaves.push_back(n);
    }
    memo_[n.get()] = r;
    return r;
  }

  int constant(DType t, const void* value) {
    std::vector<unsigned char> bytes(static_cast<const unsigned char*>(value),
                                     static_cast<const unsigned char*>(value) + itemsize(t));
    auto key = std::make_pair(t, bytes);
    auto it = const_memo_.find(key);
    if (it != const_memo_.end()) return it->second;
    int r = add_reg({Program::RegKind::Const, t, static_cast<int>(p.consts.size())});
    p.consts.push_back(bytes);
    const_memo_[key] = r;
    return r;
  }

  int instr(Op op, DType t, const std::vector<int>& srcs) {
    // Common subexpressions: the same op on the same registers is computed once.
    auto key = std::make_tuple(op, t, srcs);
    auto it = cse_.find(key);
    if (it != cse_.end()) return it->second;
    DType from = p.regs[srcs[0]].dtype;
    kernels::BlockFn fn = kernel_for(op, t, from);
    DType od = op_out_dtype(op, t);
    bool all_const = true;
    for (int s : srcs) all_const &= p.regs[s].kind == Program::RegKind::Const;
    int r;
    if (all_const) {  // constant folding: run the kernel on one element now
      alignas(16) unsigned char out[kMaxItemsize];
      const void* in[3];
      for (size_t i = 0; i < srcs.size(); ++i) in[i] = p.consts[p.regs[srcs[i]].index].data();
      fn(out, in, 1);
      r = constant(od, out);
    } else {
      r = add_reg({Program::RegKind::Temp, od, -1});
      Program::Instr ins{op, t, fn, r, {-1, -1, -1}, static_cast<int>(srcs.size())};
      for (size_t i = 0; i < srcs.size(); ++i) ins.src[i] = srcs[i];
      p.code.push_back(ins);
    }
    cse_[key] = r;
    return r;
  }

  // Give temps cache-resident slots, reusing a slot once its value is dead.
  void allocate_slots() {
    std::vector<int> last_use(p.regs.size(), -1);
    for (size_t i = 0; i < p.code.size(); ++i)
      for (int k = 0; k < p.code[i].nsrc; ++k) last_use[p.code[i].src[k]] = static_cast<int>(i);
    std::vector<int> free_slots;
    for (size_t i = 0; i < p.code.size(); ++i) {
      auto& ins = p.code[i];
      int slot;
      if (!free_slots.empty()) {
        slot = free_slots.back();
        free_slots.pop_back();
      } else {
        slot = p.ntemp_slots++;
      }
      p.regs[ins.dst].index = slot;
      // Free dead inputs after taking dst so no kernel writes over its own input.
      for (int k = 0; k < ins.nsrc; ++k) {
        int s = ins.src[k];
        bool dup = false;
        for (int j = 0; j < k; ++j) dup |= ins.src[j] == s;
        if (!dup && p.regs[s].kind == Program::RegKind::Temp && last_use[s] == static_cast<int>(i))
          free_slots.push_back(p.regs[s].index);
      }
    }
  }

 private:
  int add_reg(Program::Reg r) {
    p.regs.push_back(r);
    return static_cast<int>(p.regs.size()) - 1;
  }
  std::unordered_map<const Node*, int> memo_;
  std::map<std::pair<DType, std::vector<unsigned char>>, int> const_memo_;
  std::map<std::tuple<Op, DType, std::vector<int>>, int> cse_;
};

}  // namespace

Program compile_program(const ElementwiseNode& root) {
  Compiler c;
  std::vector<int> srcs;
  for (auto& in : root.inputs()) srcs.push_back(c.visit(in));
  int out = c.instr(root.op(), root.compute_dtype(), srcs);
  // The result must come from an instruction that writes straight into the output.
  if (c.p.regs[out].kind != Program::RegKind::Temp) {
    DType t = c.p.regs[out].dtype;
    Program::Instr ins{Op::Copy, t, kernel_for(Op::Copy, t, t), 0, {out, -1, -1}, 1};
    ins.dst = static_cast<int>(c.p.regs.size());
    c.p.regs.push_back({Program::RegKind::Temp, t, -1});
    c.p.code.push_back(ins);
    out = ins.dst;
  }
  c.p.out_reg = out;
  c.allocate_slots();
  for (const Program::Reg& r : c.p.regs)
    c.p.slot_bytes = std::max(c.p.slot_bytes, static_cast<size_t>(Program::kBlock) * itemsize(r.dtype));
  return std::move(c.p);
}

void Program::run(const void* const* leaf_data, void* out, int64_t n, ScratchScope& scratch) const {
  if (n == 0) return;
  // Constants broadcast to a block once per call; temps get one block each.
  std::vector<char*> const_buf(consts.size());
  std::vector<char*> temp_buf(ntemp_slots);
  for (int s = 0; s < ntemp_slots; ++s) temp_buf[s] = static_cast<char*>(scratch.alloc(slot_bytes));
  for (size_t r = 0; r < regs.size(); ++r) {
    if (regs[r].kind != RegKind::Const) continue;
    size_t isz = itemsize(regs[r].dtype);
    char* b = static_cast<char*>(scratch.alloc(kBlock * isz));
    const unsigned char* v = consts[regs[r].index].data();
    for (int64_t i = 0; i < kBlock; ++i) std::memcpy(b + i * isz, v, isz);
    const_buf[regs[r].index] = b;
  }
  const size_t out_isz = itemsize(regs[out_reg].dtype);
  std::vector<const void*> ptr(regs.size());
  for (int64_t off = 0; off < n; off += kBlock) {
    int64_t bn = std::min(kBlock, n - off);
    for (size_t r = 0; r < regs.size(); ++r) {
      const Reg& g = regs[r];
      if (g.kind == RegKind::Leaf) ptr[r] = static_cast<const char*>(leaf_data[g.index]) + off * itemsize(g.dtype);
      else if (g.kind == RegKind::Const) ptr[r] = const_buf[g.index];
      else if (g.index >= 0) ptr[r] = temp_buf[g.index];
    }
    ptr[out_reg] = static_cast<char*>(out) + off * out_isz;
    for (const Instr& ins : code) {
      const void* in[3] = {ptr[ins.src[0]], ins.nsrc > 1 ? ptr[ins.src[1]] : nullptr,
                           ins.nsrc > 2 ? ptr[ins.src[2]] : nullptr};
      ins.fn(const_cast<void*>(ptr[ins.dst]), in, bn);
    }
  }
}

std::string Program::to_string() const {
  auto name = [&](int r) {
    const Reg& g = regs[r];
    std::string k = g.kind == RegKind::Leaf ? "in" : g.kind == RegKind::Const ? "c" : "t";
    return k + std::to_string(g.index) + ":" + dtype_name(g.dtype);
  };
  std::string s;
  for (const Instr& ins : code) {
    s += "  " + (ins.dst == out_reg ? std::string("out") : name(ins.dst)) + " = " + op_name(ins.op) + "(";
    for (int k = 0; k < ins.nsrc; ++k) s += (k ? ", " : "") + name(ins.src[k]);
    s += ")\n";
  }
  return s;
}

}  // namespace b2lazy
