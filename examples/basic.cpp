// A small tour of the C++ API: build operands, write one to disk, evaluate an expression
// lazily into a compressed file, and check a few values.
// Usage: example_basic [workdir]
#include <b2lazy/b2lazy.hpp>

#include <cmath>
#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  using namespace b2lazy;
  std::string dir = argc > 1 ? argv[1] : ".";
  try {
    Context ctx(2);
    // Region-computable constructors: nothing is materialised here.
    Array x = linspace(0, 1, 1000 * 1000, true, DType::F64, {1000, 1000}, {250, 1000});
    ComputeOptions store;
    store.urlpath = dir + "/example_x.b2nd";
    Array a = x.compute(store, &ctx);  // a compressed operand on disk
    Array b = open(store.urlpath);

    // sin(a)**2 + cos(b)**2 + where(a > 0.5, a, 0): one fused kernel.
    Array e = pow(sin(a), 2) + pow(cos(b), 2) + where(a > 0.5, a, 0.0);
    std::printf("%s", e.explain().c_str());

    ComputeOptions out;
    out.urlpath = dir + "/example_out.b2nd";
    Array r = e.compute(out, &ctx);
    std::printf("chunks decompressed: %lld, output chunks: %lld\n",
                static_cast<long long>(r.stats()->chunks_decompressed_total),
                static_cast<long long>(r.stats()->output_chunks));

    // A lazy slice of the result reads only the chunks it covers.
    std::vector<double> row = r[{Index::at(999), Index::slice(0, 3)}].to_vector(&ctx);
    for (int j = 0; j < 3; ++j) {
      double v = (999 * 1000.0 + j) / (1000.0 * 1000 - 1);
      double expect = 1.0 + (v > 0.5 ? v : 0.0);
      if (std::fabs(row[j] - expect) > 1e-12) {
        std::fprintf(stderr, "mismatch at %d: %g != %g\n", j, row[j], expect);
        return 1;
      }
    }
    std::printf("ok\n");
    return 0;
  } catch (const Error& err) {
    std::fprintf(stderr, "error: %s\n", err.what());
    return 1;
  }
}
