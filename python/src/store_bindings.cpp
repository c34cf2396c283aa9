// Byte stores (b2lazy/byte_store.hpp) from Python: _core.open_store(url, storage_options)
// for the tests and the Python layer. I/O runs without the GIL.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <b2lazy/array.hpp>
#include <b2lazy/byte_store.hpp>
#include <b2lazy/driver.hpp>
#include <b2lazy/error.hpp>
#include <b2lazy/store_units.hpp>

#include "bindings.hpp"

namespace b2lazy_py {

using namespace b2lazy;

namespace {

using RangeList = std::vector<std::pair<int64_t, int64_t>>;

// fsspec's storage_options as StoreOptions values: nested dicts joined with '.'
// ({"client_kwargs": {"endpoint_url": u}} -> "client_kwargs.endpoint_url"), flags as
// "true"/"false", None left out, anything else as str().
void flatten(const nb::dict& d, const std::string& prefix, std::map<std::string, std::string>& out) {
  for (auto [k, v] : d) {
    const std::string name = prefix + nb::cast<std::string>(nb::str(k));
    if (v.is_none()) continue;
    if (nb::isinstance<nb::dict>(v)) flatten(nb::borrow<nb::dict>(v), name + ".", out);
    else if (nb::isinstance<nb::bool_>(v)) out[name] = nb::cast<bool>(v) ? "true" : "false";
    else out[name] = nb::cast<std::string>(nb::str(v));
  }
}

std::vector<ByteRange> to_ranges(const RangeList& r) {
  std::vector<ByteRange> out;
  out.reserve(r.size());
  for (auto [o, l] : r) out.push_back({o, l});
  return out;
}

nb::object parts_object(const std::optional<ByteStore::Parts>& parts) {
  if (!parts) return nb::none();
  nb::list out;
  for (const auto& p : *parts) out.append(nb::bytes(reinterpret_cast<const char*>(p.data()), p.size()));
  return out;
}

nb::dict info_dict(const ObjectInfo& i) {
  nb::dict d;
  d["key"] = i.key;
  d["size"] = i.size;
  d["version"] = i.version;
  return d;
}

}  // namespace

StoreOptions store_options(nb::handle storage_options) {
  StoreOptions o;
  if (storage_options.is_none()) return o;
  if (!nb::isinstance<nb::dict>(storage_options))
    throw TypeError("storage_options must be a dict (fsspec's names), got " +
                    nb::cast<std::string>(nb::handle(storage_options.type()).attr("__name__")));
  flatten(nb::borrow<nb::dict>(storage_options), "", o.values);
  auto take_int = [&](const char* name, int& field) {
    auto it = o.values.find(name);
    if (it == o.values.end()) return;
    try {
      field = std::stoi(it->second);
    } catch (const std::exception&) {
      throw ValueError(std::string("storage_options['") + name + "'] must be an integer, got '" + it->second + "'");
    }
    if (field < 1) throw ValueError(std::string("storage_options['") + name + "'] must be at least 1");
    o.values.erase(it);
  };
  take_int("concurrency", o.concurrency);
  take_int("max_retries", o.max_retries);
  return o;
}

void bind_store(nb::module_& m) {
  nb::class_<ByteStore>(m, "ByteStore")
      .def_prop_ro("root", &ByteStore::root)
      .def("url_of", &ByteStore::url_of, nb::arg("key"))
      .def(
          "read",
          [](ByteStore& s, const std::string& key, const RangeList& ranges) {
            std::optional<ByteStore::Parts> parts;
            {
              nb::gil_scoped_release nogil;
              parts = s.read(key, to_ranges(ranges));
            }
            return parts_object(parts);
          },
          nb::arg("key"), nb::arg("ranges"),
          "Ranges [(offset, length)] of object key (length -1: to the end): a list of bytes, or None when the object "
          "is missing.")
      .def(
          "read_many",
          [](ByteStore& s, const std::vector<std::pair<std::string, RangeList>>& requests) {
            std::vector<ByteStore::Request> rq;
            for (const auto& [key, ranges] : requests) rq.push_back({key, to_ranges(ranges)});
            std::vector<std::optional<ByteStore::Parts>> got;
            {
              nb::gil_scoped_release nogil;
              got = s.read_many(rq);
            }
            nb::list out;
            for (const auto& g : got) out.append(parts_object(g));
            return out;
          },
          nb::arg("requests"), "[(key, [(offset, length)])] read at once: per request a list of bytes or None.")
      .def(
          "stat",
          [](ByteStore& s, const std::string& key) -> nb::object {
            std::optional<ObjectInfo> info;
            {
              nb::gil_scoped_release nogil;
              info = s.stat(key);
            }
            if (!info) return nb::none();
            return info_dict(*info);
          },
          nb::arg("key"))
      .def(
          "list",
          [](ByteStore& s, const std::string& prefix) {
            std::vector<ObjectInfo> got;
            {
              nb::gil_scoped_release nogil;
              got = s.list(prefix);
            }
            nb::list out;
            for (const auto& i : got) out.append(info_dict(i));
            return out;
          },
          nb::arg("prefix") = "")
      .def(
          "write",
          [](ByteStore& s, const std::string& key, nb::bytes data) {
            const char* p = data.c_str();  // immutable, and held by this call
            const size_t n = data.size();
            nb::gil_scoped_release nogil;
            s.write(key, p, n);
          },
          nb::arg("key"), nb::arg("data"))
      .def(
          "remove",
          [](ByteStore& s, const std::string& key) {
            nb::gil_scoped_release nogil;
            s.remove(key);
          },
          nb::arg("key"))
      .def("counters", [](const ByteStore& s) {
        const auto c = s.counters();
        nb::dict d;
        d["requests"] = c.requests;
        d["bytes"] = c.bytes;
        d["bytes_written"] = c.bytes_written;
        d["retries"] = c.retries;
        d["wait_seconds"] = c.wait_seconds;
        return d;
      });
  m.def(
      "open_store",
      [](const std::string& url, nb::object storage_options, int concurrency, int max_retries) {
        StoreOptions o = store_options(storage_options);
        o.concurrency = concurrency;
        o.max_retries = max_retries;
        return open_store(url, o);
      },
      nb::arg("url"), nb::arg("storage_options").none() = nb::none(), nb::arg("concurrency") = 64,
      nb::arg("max_retries") = 8,
      "The byte store for url (https://, s3://, gs://, a path); storage_options as fsspec's (nested dicts flattened "
      "with '.').");
  // For the prefetch's tests and benchmark (src/io/store/store_units_source.hpp).
  m.def(
      "_store_units_array",
      [](StorePtr store, const std::string& dtype, std::vector<int64_t> shape, std::vector<int64_t> units,
         bool prefetch) {
        return store_units_array(std::move(store), dtype_from_name(dtype), Shape(shape.begin(), shape.end()),
                                 Shape(units.begin(), units.end()), prefetch);
      },
      nb::arg("store"), nb::arg("dtype"), nb::arg("shape"), nb::arg("units"), nb::arg("prefetch") = true,
      "An array whose units are the store's objects 'u/<id>' (raw items, C order, padded at the edges).");
  // The tests count a remote array's requests on the store it reads.
  m.def(
      "open_in_store",
      [](const StorePtr& store, const std::string& driver, const std::string& member) {
        NodePtr n;
        {
          nb::gil_scoped_release nogil;
          n = open_in_store(store, driver, member);
        }
        return Array(n);
      },
      nb::arg("store"), nb::arg("driver"), nb::arg("member") = "",
      "The array the store holds (its root URL), read by the named driver through that store; member: one "
      "inside that container (an HDF5 dataset '/g/x', a .b2z member).");
}

}  // namespace b2lazy_py
