""".b2z zips whose member table claims huge counts, sizes or names (issue #36 item 7): the
member table is read entry by entry with each name's own length, so what it may hold in
memory is bounded by the file; a zip that claims more is an OSError naming the path. Each
case is read in a fresh interpreter, whose peak RSS is measured."""

import os
import struct
import subprocess
import sys
import zipfile

import blosc2
import numpy as np
import pytest

RSS_LIMIT = 200 * 2**20

READ_IN_CHILD = """
import resource, sys
import b2lazy
for url in sys.argv[1:]:
    try:
        b2lazy.open(url).to_numpy()
        print("read")
    except OSError as e:
        print("OSError:", e)
# VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so a child forked from a
# large pytest process would report the parent's size.
print(int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]))
"""


def zip_of(path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for name, data in members:
            z.writestr(name, data)
    return bytearray(open(path, "rb").read())


def eocd(data):
    return data.rindex(b"PK\x05\x06")


def central(data):
    return data.index(b"PK\x01\x02")


FRAME = blosc2.asarray(np.arange(10.0)).to_cframe()


def claims_many_entries(data):
    e = eocd(data)
    data[e + 8 : e + 12] = struct.pack("<HH", 65535, 65535)
    return data


def claims_huge_directory(data):
    e = eocd(data)
    data[e + 12 : e + 16] = struct.pack("<I", 0xFFFFFFF0)
    return data


def claims_zip64_sizes(data):
    c = central(data)
    data[c + 20 : c + 28] = struct.pack("<II", 0xFFFFFFFF, 0xFFFFFFFF)  # "see the zip64 extra field"
    return data


def claims_long_name(data):
    c = central(data)
    data[c + 28 : c + 30] = struct.pack("<H", 65535)  # past the end of the file
    return data


def claims_far_offset(data):
    c = central(data)
    data[c + 42 : c + 46] = struct.pack("<I", 0xFFFFFF00)
    return data


CASES = {
    "entries": claims_many_entries,
    "directory": claims_huge_directory,
    "zip64-sizes": claims_zip64_sizes,
    "name-length": claims_long_name,
    "offset": claims_far_offset,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_member_table_stays_small(tmp_path, case):
    path = str(tmp_path / "s.b2z")
    data = CASES[case](zip_of(path, [("x.b2nd", FRAME)]))
    with open(path, "wb") as f:
        f.write(data)
    r = subprocess.run(
        [sys.executable, "-c", READ_IN_CHILD, path, path + "#/x"], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    *said, kib = r.stdout.strip().split("\n")
    for s in said:
        assert s == "read" or (s.startswith("OSError:") and path in s), s
    assert int(kib) * 1024 < RSS_LIMIT, f"{case}: peaked at {int(kib) / 1024:.0f} MiB"


def test_many_long_names_stay_small(tmp_path):
    """2000 members named by 4000 bytes each: the table is held once, as long as the file."""
    path = str(tmp_path / "s.b2z")
    zip_of(path, [(f"{i:04d}" + "k" * 4000 + ".b2nd", FRAME) for i in range(2000)])
    r = subprocess.run([sys.executable, "-c", READ_IN_CHILD, path], capture_output=True, text=True, timeout=120)
    said, kib = r.stdout.strip().split("\n")
    assert said.startswith("OSError:") and "holds 2000 arrays" in said, said
    assert int(kib) * 1024 < RSS_LIMIT
    assert os.path.getsize(path) > 8_000_000
