"""
A run on a dask.distributed cluster
===================================

``scheduler=`` hands an evaluation's plan to a dask.distributed cluster: every worker
builds the same plan from the expression's saved form, the stages run in pieces on all
workers, and a Zarr output is written by the workers in parallel. A ``LocalCluster`` of two
single-threaded workers stands in for a real cluster here (in this process, so that the page
runs anywhere; a script that starts worker processes needs Python's
``if __name__ == "__main__":`` guard); with a cluster you run, pass
``Client("tcp://host:8786")``. Operands must be at the same paths for every worker.
"""

import os
import shutil
import tempfile
import time

import numpy as np
from distributed import Client, LocalCluster

import b2lazy as bl

d = tempfile.mkdtemp()
path = os.path.join(d, "a.b2nd")
bl.random.default_rng(7).standard_normal((4096, 1024)).compute(urlpath=path, chunks=(256, 1024))
a = bl.open(path)
e = (a - bl.mean(a, axis=0)) / bl.std(a, axis=0)

cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
client = Client(cluster)
t0 = time.perf_counter()
r = e.compute(urlpath=os.path.join(d, "z.zarr"), scheduler=client)
print(f"on the cluster: {time.perf_counter() - t0:.2f} s -> {r}")
t0 = time.perf_counter()
local = e.compute(urlpath=os.path.join(d, "z-local.zarr"))
print(f"in this process: {time.perf_counter() - t0:.2f} s")
# the cluster folds the means' partial sums in another order: equal to rounding
print("same values:", np.allclose(r.to_numpy(), local.to_numpy(), rtol=1e-12, atol=1e-12))
print("a slice, evaluated by the workers:", e[:2, :3].to_numpy(scheduler=client))
# %%
# ``b2lazy eval ... --scheduler local:2`` does the same from the command line.
client.close()
cluster.close()
shutil.rmtree(d)
