// A logging store over a local directory for a test scheme (io/store/logging_store.hpp),
// from Python: the tests count the requests a read makes and fail writes on purpose.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <map>
#include <memory>
#include <mutex>

#include "bindings.hpp"
#include "io/store/logging_store.hpp"

namespace b2lazy_py {

using namespace b2lazy;

namespace {

std::mutex logs_mu;
std::map<std::string, std::shared_ptr<StoreLog>>& logs() {
  static std::map<std::string, std::shared_ptr<StoreLog>> m;
  return m;
}

std::shared_ptr<StoreLog> log_of(const std::string& scheme) {
  std::lock_guard<std::mutex> g(logs_mu);
  auto it = logs().find(scheme);
  if (it == logs().end()) throw nb::value_error(("no logging store registered for '" + scheme + "'").c_str());
  return it->second;
}

}  // namespace

void bind_logging_store(nb::module_& m) {
  m.def(
      "_register_logging_store",
      [](const std::string& scheme, const std::string& root) {
        auto log = register_logging_store(scheme, root);
        std::lock_guard<std::mutex> g(logs_mu);
        logs()[scheme] = log;
      },
      "scheme://PATH opens a store of the files under root/PATH that logs its requests (tests only).");
  m.def(
      "_logging_store_log",
      [](const std::string& scheme) {
        auto log = log_of(scheme);
        std::lock_guard<std::mutex> g(log->mu);
        nb::list batches;
        for (const auto& b : log->batches) {
          nb::list requests;
          for (const auto& r : b) {
            nb::list ranges;
            for (const auto& x : r.ranges) ranges.append(nb::make_tuple(x.offset, x.length));
            requests.append(nb::make_tuple(r.key, ranges));
          }
          batches.append(requests);
        }
        nb::list writes, removes;
        for (const auto& k : log->writes) writes.append(k);
        for (const auto& k : log->removes) removes.append(k);
        nb::dict d;
        d["batches"] = batches;
        d["writes"] = writes;
        d["removes"] = removes;
        return d;
      },
      "What the scheme's stores were asked: batches of (key, [(offset, length)]), keys written, keys removed.");
  m.def(
      "_logging_store_reset",
      [](const std::string& scheme, int64_t fail_writes_after) {
        auto log = log_of(scheme);
        log->clear();
        std::lock_guard<std::mutex> g(log->mu);
        log->fail_writes_after = fail_writes_after;
      },
      nb::arg("scheme"), nb::arg("fail_writes_after") = -1,
      "Clears the log; fail_writes_after >= 0 makes writes after that many fail.");
}

}  // namespace b2lazy_py
