// A ByteStore whose I/O is a Python object's (b2lazy/_fsspec_store.py wraps an fsspec
// filesystem): _core.register_store(scheme, factory) makes `scheme` URLs open
// factory(url, options) and call its read_many/stat/list/write/remove. The GIL is taken
// only around those calls; everything else (lengths checked, counters) runs without it.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <atomic>
#include <chrono>
#include <cstring>

#include <b2lazy/byte_store.hpp>
#include <b2lazy/error.hpp>

#include "bindings.hpp"

namespace b2lazy_py {

using namespace b2lazy;

namespace {

// A Python exception raised by the store's object as b2lazy's error naming `url`:
// FileNotFoundError and OSError stay I/O errors, anything else too (the store failed).
// (type and message only: no traceback in b2lazy's messages)
std::string describe(const nb::python_error& e) {
  return nb::cast<std::string>(nb::handle(e.type()).attr("__name__")) + ": " +
         nb::cast<std::string>(nb::str(e.value()));
}

[[noreturn]] void rethrow_named(const nb::python_error& e, const std::string& url) {
  throw IOError("'" + url + "': " + describe(e));
}

class PythonStore final : public ByteStore {
 public:
  // Holds a reference to `obj` (taken with the GIL held by the caller).
  PythonStore(nb::object obj, std::string root) : obj_(obj.release().ptr()), root_(std::move(root)) {}
  ~PythonStore() override {
    if (!Py_IsInitialized()) return;  // at exit: the interpreter is gone, so is the object
    nb::gil_scoped_acquire gil;
    Py_DECREF(obj_);
  }

  std::string root() const override { return root_; }

  std::optional<Parts> read(const std::string& key, const std::vector<ByteRange>& ranges) override {
    return std::move(read_many({Request{key, ranges}})[0]);
  }

  std::vector<std::optional<Parts>> read_many(const std::vector<Request>& requests) override {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::optional<Parts>> out(requests.size());
    int64_t got_bytes = 0;
    {
      nb::gil_scoped_acquire gil;
      try {
        nb::list rq;
        for (const auto& r : requests) {
          nb::list ranges;
          for (const auto& b : r.ranges) ranges.append(nb::make_tuple(b.offset, b.length));
          rq.append(nb::make_tuple(r.key, ranges));
        }
        nb::object res = self().attr("read_many")(rq);
        size_t i = 0;
        for (nb::handle item : res) {
          if (i >= requests.size()) break;
          const Request& r = requests[i];
          if (!item.is_none()) {
            Parts parts;
            size_t j = 0;
            for (nb::handle p : item) {
              if (j >= r.ranges.size()) break;
              nb::bytes b = nb::cast<nb::bytes>(p);
              const auto want = r.ranges[j].length;
              if (want >= 0 && static_cast<int64_t>(b.size()) != want)
                throw IOError("'" + url_of(r.key) + "': asked for " + std::to_string(want) + " bytes at offset " +
                              std::to_string(r.ranges[j].offset) + ", got " + std::to_string(b.size()) +
                              " (the object is shorter, or changed)");
              const auto* data = reinterpret_cast<const uint8_t*>(b.c_str());
              parts.emplace_back(data, data + b.size());
              got_bytes += static_cast<int64_t>(b.size());
              ++j;
            }
            if (j != r.ranges.size())
              throw IOError("'" + url_of(r.key) + "': the store answered " + std::to_string(j) + " of " +
                            std::to_string(r.ranges.size()) + " ranges");
            out[i] = std::move(parts);
          }
          ++i;
        }
        if (i != requests.size())
          throw IOError("'" + root_ + "': the store answered " + std::to_string(i) + " of " +
                        std::to_string(requests.size()) + " requests");
      } catch (const nb::python_error& e) {
        rethrow_named(e, requests.size() == 1 ? url_of(requests[0].key) : root_);
      } catch (const nb::cast_error&) {
        throw IOError("'" + root_ + "': the store's read_many returned something other than lists of bytes");
      }
    }
    requests_ += static_cast<int64_t>(requests.size());
    bytes_ += got_bytes;
    add_wait(t0);
    return out;
  }

  std::optional<ObjectInfo> stat(const std::string& key) override {
    nb::gil_scoped_acquire gil;
    try {
      nb::object d = self().attr("stat")(key);
      ++requests_;
      if (d.is_none()) return std::nullopt;
      ObjectInfo info;
      info.key = key;
      info.size = nb::cast<int64_t>(d["size"]);
      info.version = nb::cast<std::string>(nb::str(d["version"]));
      return info;
    } catch (const nb::python_error& e) {
      rethrow_named(e, url_of(key));
    }
  }

  std::vector<ObjectInfo> list(const std::string& prefix) override {
    nb::gil_scoped_acquire gil;
    try {
      std::vector<ObjectInfo> out;
      for (nb::handle d : self().attr("list")(prefix)) {
        ObjectInfo info;
        info.key = nb::cast<std::string>(d["key"]);
        info.size = nb::cast<int64_t>(d["size"]);
        info.version = nb::cast<std::string>(nb::str(d["version"]));
        out.push_back(std::move(info));
      }
      ++requests_;
      return out;
    } catch (const nb::python_error& e) {
      rethrow_named(e, url_of(prefix));
    }
  }

  void write(const std::string& key, const void* data, size_t nbytes) override {
    nb::gil_scoped_acquire gil;
    try {
      self().attr("write")(key, nb::bytes(static_cast<const char*>(data), nbytes));
    } catch (const nb::python_error& e) {
      rethrow_named(e, url_of(key));
    }
    ++requests_;
    bytes_written_ += static_cast<int64_t>(nbytes);
  }

  void remove(const std::string& key) override {
    nb::gil_scoped_acquire gil;
    try {
      self().attr("remove")(key);
    } catch (const nb::python_error& e) {
      rethrow_named(e, url_of(key));
    }
    ++requests_;
  }

  StoreCounters counters() const override {
    StoreCounters c;
    c.requests = requests_;
    c.bytes = bytes_;
    c.bytes_written = bytes_written_;
    c.wait_seconds = static_cast<double>(wait_ns_) * 1e-9;
    return c;
  }

 private:
  nb::handle self() const { return nb::handle(obj_); }
  void add_wait(std::chrono::steady_clock::time_point t0) {
    wait_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  }

  PyObject* obj_;
  std::string root_;
  std::atomic<int64_t> requests_{0}, bytes_{0}, bytes_written_{0}, wait_ns_{0};
};

}  // namespace

void bind_python_store(nb::module_& m) {
  m.def(
      "register_store",
      [](const std::string& scheme, nb::object factory) {
        // The factory lives as long as the registry (the process): never released, so no
        // Python object is touched after the interpreter is gone.
        PyObject* f = factory.release().ptr();
        register_store(scheme, [f](const std::string& url, const StoreOptions& options) -> StorePtr {
          nb::gil_scoped_acquire gil;
          nb::dict values;
          for (const auto& [k, v] : options.values) values[k.c_str()] = v;
          try {
            nb::object obj = nb::handle(f)(url, values);
            std::string root = nb::cast<std::string>(obj.attr("root"));
            return std::make_shared<PythonStore>(std::move(obj), std::move(root));
          } catch (const nb::python_error& e) {
            if (e.matches(PyExc_ValueError)) throw ValueError(describe(e));
            const std::string what = describe(e);
            throw IOError(what.find(url) == std::string::npos ? "'" + url + "': " + what : what);
          }
        });
      },
      nb::arg("scheme"), nb::arg("factory"),
      "URLs of `scheme` open factory(url, options) (options: storage_options flattened, values as strings): "
      "an object with root, read_many, stat, list, write, remove (b2lazy/_fsspec_store.py).");
  m.def("is_remote_url", &is_remote_url, nb::arg("url"));
}

}  // namespace b2lazy_py
