// The fused elementwise kernel: a register program over fixed-size blocks that stay in
// cache (numexpr's idea), built with common-subexpression elimination and constant
// folding.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "b2lazy/node.hpp"
#include "b2lazy/ops.hpp"

namespace b2lazy {

class ElementwiseNode;
class ScratchScope;

struct Program {
  static constexpr int64_t kBlock = 2048;  // elements per block: 16 KiB of float64

  enum class RegKind : uint8_t { Leaf, Const, Temp };
  struct Reg {
    RegKind kind;
    DType dtype;
    int index;  // leaf number, constant number, or temp slot
  };
  struct Instr {
    Op op;
    DType t;
    kernels::BlockFn fn;
    int dst;
    int src[3];
    int nsrc;
  };
  std::vector<NodePtr> leaves;
  std::vector<std::vector<unsigned char>> consts;  // one value each, in its reg's dtype
  std::vector<Reg> regs;
  std::vector<Instr> code;
  int out_reg = -1;
  int ntemp_slots = 0;
  // Bytes of a temp slot: a block of the widest item the program holds (8 bytes at least,
  // so a complex128 program's slots are 32 KiB and everyone else's stay 16 KiB).
  size_t slot_bytes = kBlock * 8;

  // Evaluate n elements: leaf i is read densely from leaf_data[i]; results to `out`.
  void run(const void* const* leaf_data, void* out, int64_t n, ScratchScope& scratch) const;
  std::string to_string() const;
};

Program compile_program(const ElementwiseNode& root);

}  // namespace b2lazy
