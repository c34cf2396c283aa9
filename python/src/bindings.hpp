// What the binding's source files share.
#pragma once
#include <nanobind/nanobind.h>

#include <functional>

#include <b2lazy/byte_store.hpp>
#include <b2lazy/stats.hpp>

namespace b2lazy_py {

namespace nb = nanobind;
// Stats as the dict Python sees (Array.stats(), to_numpy's) and back (convert.cpp).
nb::dict stats_dict(const b2lazy::Stats& s);
b2lazy::Stats stats_from_dict(nb::handle d);
// The Context and Array classes.
void bind_array(nb::module_& m);
// _core.call: any registry function by name, with Python's arguments (call_bindings.cpp).
void bind_call(nb::module_& m);
// The function registry, elementwise, where, clip, reduce, quantile, scan, linalg, take, shapes.
void bind_functions(nb::module_& m);
// x[key] = value (assign, assign_stored, assign_stored_where) and masks (mask_select, count_mask).
void bind_assign(nb::module_& m);
// matrix_transpose and the Array API functions on their own lazy nodes (eye ... unstack).
void bind_array_api(nb::module_& m);
// evaluate, expression_names, expression_functions.
void bind_expressions(nb::module_& m);
// Sources: open, from_numpy(_compressed), from_cframe / to_cframe, full, arange, linspace.
void bind_sources(nb::module_& m);
// compute, to_numpy, the Plan class, plan, execute_plan, compute_plan.
void bind_evaluation(nb::module_& m);
// cancel_at_exit (the package's atexit hook): stops the evaluations still running.
void bind_cancel_at_exit(nb::module_& m);
// The distributed executor's pieces (b2lazy/distribute.hpp).
void bind_distribute(nb::module_& m);
// lazyudf with a Python function (b2lazy/udf.hpp).
void bind_udf(nb::module_& m);
// Issue #37's statistics: histograms, isin, digitize, bincount, random sources, nan* quantiles.
void bind_statistics(nb::module_& m);
// Runs `fn` as interruptible.hpp's interruptible() does: without the GIL, stopped by SIGINT.
void run_interruptible(const std::function<void()>& fn);
// einsum, pad and rechunk (b2lazy/einsum.hpp, b2lazy/pad.hpp).
void bind_einsum_pad(nb::module_& m);
// Moving (rolling) reductions (b2lazy/rolling.hpp).
void bind_rolling(nb::module_& m);
// The chunks a rechunk decides without planning (b2lazy/plan.hpp), for xarray's chunks.
void bind_xarray_open(nb::module_& m);
// segment_reduce (b2lazy/groupby.hpp).
void bind_groupby(nb::module_& m);
// The fft extension (b2lazy/fft.hpp).
void bind_fft(nb::module_& m);
// b2lazy.linalg's factorisations and solvers (b2lazy/linalg.hpp).
void bind_linalg(nb::module_& m);
// A logging store for test schemes (io/store/logging_store.hpp).
void bind_logging_store(nb::module_& m);
// Byte stores (b2lazy/byte_store.hpp): open_store and the ByteStore object.
void bind_store(nb::module_& m);
// fsspec's storage_options (a dict or None) as StoreOptions: nested dicts joined with '.',
// flags "true"/"false"; "concurrency" and "max_retries" set those fields.
b2lazy::StoreOptions store_options(nb::handle storage_options);
// Stores whose I/O is Python's (fsspec): register_store(scheme, factory), is_remote_url.
void bind_python_store(nb::module_& m);

}  // namespace b2lazy_py
