// While a NoEvaluation lives on a thread, evaluating there (execute_plan) throws
// EvaluationRefused: opening a file that describes an expression (python-blosc2's saved
// LazyExpr) must do no work proportional to data, and some functions compute when built
// (a mask counted, nonzero, unique, index arrays read).
#pragma once
#include <string>

#include "b2lazy/error.hpp"

namespace b2lazy {

struct EvaluationRefused : ValueError {
  using ValueError::ValueError;
};

class NoEvaluation {
 public:
  explicit NoEvaluation(std::string why) : outer_(current()) { current() = &why_, why_ = std::move(why); }
  ~NoEvaluation() { current() = outer_; }
  NoEvaluation(const NoEvaluation&) = delete;
  NoEvaluation& operator=(const NoEvaluation&) = delete;
  // Throws EvaluationRefused (with the innermost reason) when one is alive on this thread.
  static void check() {
    if (current()) throw EvaluationRefused(*current());
  }

 private:
  static const std::string*& current() {
    thread_local const std::string* why = nullptr;
    return why;
  }
  const std::string* outer_;
  std::string why_;
};

}  // namespace b2lazy
