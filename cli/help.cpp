// `b2lazy COMMAND --help`: each subcommand's usage and options.
#include <map>
#include <string>

#include "commands.hpp"

namespace b2lazy::cli {

namespace {
const std::map<std::string, const char*>& helps() {
  static const std::map<std::string, const char*> h = {
      {"eval",
       "usage: b2lazy eval EXPR NAME=PATH ... -o OUT [options]\n"
       "Evaluate EXPR over the arrays NAME=PATH, chunk by chunk, into OUT, compressed: a b2nd file\n"
       "(OUT.b2nd, a sparse directory OUT/) or a Zarr v3 array (OUT.zarr, zarr:OUT).\n"
       "PATHs and OUT may be URLs: https://HOST/x.b2nd, s3://BUCKET/x.zarr, gs://BUCKET/x.zarr.\n"
       "EXPR uses Python syntax, e.g. \"matmul(sum(a, axis=1), b) + 1\" (b2lazy functions lists the calls).\n"
       "options:\n"
       "  -o, --output OUT      the output array (required)\n"
       "  --chunks C            output chunks, e.g. 1000,1000 (default: the plan's)\n"
       "  --blocks B            b2nd blocks inside the chunks\n"
       "  --shards S            Zarr shards (multiples of the chunks)\n"
       "  --codec NAME          blosc codec: zstd (default), lz4, lz4hc, blosclz, zlib\n"
       "  --clevel N            compression level 0..9 (default 1)\n"
       "  --filter NAME         shuffle (default), bitshuffle, nofilter\n"
       "  --compressor NAME     Zarr outputs: blosc (default) or zstd\n"
       "  --threads N           worker threads (default: one per core)\n"
       "  --max-memory SIZE     memory budget, e.g. 512M or 2G\n"
       "  --progress            show a progress bar (default: when stderr is a terminal)\n"
       "  --no-progress         never show it\n"
       "  --scheduler ADDR      evaluate on a dask.distributed cluster: tcp://HOST:PORT, or local:N\n"
       "                        (N local workers); needs Python's b2lazy package and distributed\n"
       "  --storage-option KEY=VALUE\n"
       "                        how to reach remote URLs (https://, s3://, gs://), repeatable; fsspec's\n"
       "                        names, nested ones dotted: anon=true, key=..., secret=..., token=...,\n"
       "                        region_name=..., client_kwargs.endpoint_url=http://HOST:PORT,\n"
       "                        headers.NAME=..., concurrency=N, max_retries=N; credentials not given\n"
       "                        come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,\n"
       "                        AWS_REGION, AWS_ENDPOINT_URL, AWS_PROFILE and ~/.aws (S3),\n"
       "                        GOOGLE_APPLICATION_CREDENTIALS (GCS)\n"
       "  -h, --help            show this help\n"
       "exit status: 0 done, 1 failure, 2 usage or expression error, 130 interrupted\n"},
      {"explain",
       "usage: b2lazy explain EXPR NAME=PATH ...\n"
       "Print the plan compute() would run for EXPR over the arrays NAME=PATH (nothing is computed):\n"
       "stages, windows, tasks, estimated reads and peak memory. PATHs may be URLs (as eval's).\n"
       "options:\n"
       "  --storage-option KEY=VALUE\n"
       "                        how to reach remote URLs (https://, s3://, gs://), repeatable; fsspec's\n"
       "                        names, nested ones dotted: anon=true, key=..., secret=..., token=...,\n"
       "                        region_name=..., client_kwargs.endpoint_url=http://HOST:PORT,\n"
       "                        headers.NAME=..., concurrency=N, max_retries=N; credentials not given\n"
       "                        come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,\n"
       "                        AWS_REGION, AWS_ENDPOINT_URL, AWS_PROFILE and ~/.aws (S3),\n"
       "                        GOOGLE_APPLICATION_CREDENTIALS (GCS)\n"
       "  -h, --help            show this help\n"},
      {"info",
       "usage: b2lazy info PATH\n"
       "Describe a stored array: shape, dtype, chunks, blocks or shards, codecs, sizes and ratio\n"
       "(b2nd, Zarr v2/v3, HDF5 \"f.h5#/dataset\", \"s.b2z#/key\").\n"
       "A lazy expression saved by Python's Array.save(): its operands (paths, shapes, dtypes),\n"
       "shape, dtype and plan summary (read by Python's b2lazy package).\n"
       "PATH may be a URL: https://HOST/x.b2nd, s3://BUCKET/x.zarr, gs://BUCKET/x.zarr.\n"
       "options:\n"
       "  --storage-option KEY=VALUE\n"
       "                        how to reach remote URLs (https://, s3://, gs://), repeatable; fsspec's\n"
       "                        names, nested ones dotted: anon=true, key=..., secret=..., token=...,\n"
       "                        region_name=..., client_kwargs.endpoint_url=http://HOST:PORT,\n"
       "                        headers.NAME=..., concurrency=N, max_retries=N; credentials not given\n"
       "                        come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,\n"
       "                        AWS_REGION, AWS_ENDPOINT_URL, AWS_PROFILE and ~/.aws (S3),\n"
       "                        GOOGLE_APPLICATION_CREDENTIALS (GCS)\n"
       "  -h, --help            show this help\n"},
      {"functions",
       "usage: b2lazy functions [NAME ...]\n"
       "List the functions EXPR can call with their signatures, by family; with NAMEs, each in\n"
       "detail (family, result dtype, aliases, whether it is also a method).\n"
       "options:\n"
       "  -h, --help            show this help\n"},
      {"demo",
       "usage: b2lazy demo [--n N] [--dir D] [--threads N] [--keep] [--progress | --no-progress]\n"
       "Generate operands on disk and evaluate the expressions b2lazy is for, printing the time,\n"
       "the peak memory and what a NumPy evaluation would hold in memory.\n"
       "options:\n"
       "  --n N                 operand size, 64..65536 (default 4096)\n"
       "  --dir D               write the operands into D (default: a temporary directory)\n"
       "  --threads N           worker threads (default: one per core)\n"
       "  --keep                keep the generated files\n"
       "  --progress            show progress bars (default: when stderr is a terminal)\n"
       "  --no-progress         never show them\n"
       "  -h, --help            show this help\n"},
  };
  return h;
}
}  // namespace

const char* command_help(const std::string& command) {
  auto it = helps().find(command);
  return it == helps().end() ? nullptr : it->second;
}

bool wants_help(const std::vector<std::string>& argv) {
  for (const std::string& a : argv)
    if (a == "-h" || a == "--help") return true;
  return false;
}

}  // namespace b2lazy::cli
