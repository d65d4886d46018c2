"""MUVR query dict pickles are read without running code and without the memory or time a small file could ask for."""
import pickle
import re
import subprocess
import sys

import numpy as np
import pytest

from sova_lib.benchmarks.muvr import features
from sova_lib.benchmarks.muvr.annotation_files import MuvrDataError

RELEASED = {"query_prompt": np.arange(4, dtype=np.float32)[None],
            "tags": {"red car": np.array([[0.5, -1.0, 2.0, 0.0]], np.float32)}}


def _write(tmp_path, data: bytes):
    path = tmp_path / "q1_query_dict.pkl"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("protocol", [3, 4, 5])
def test_the_released_form_reads_back_exactly(tmp_path, protocol):
    path = _write(tmp_path, pickle.dumps(RELEASED, protocol=protocol))  # 4: what the official code writes
    text, tags = features.read_query_dict(path)
    assert text.tolist() == [0.0, 1.0, 2.0, 3.0] and tags["red car"].tolist() == [0.5, -1.0, 2.0, 0.0]


def test_numpy_1_names_big_endian_and_fortran_arrays_read_back(tmp_path):
    data = {"query_prompt": np.asfortranarray(np.arange(6, dtype=">f8").reshape(2, 3)), "tags": {}}
    blob = pickle.dumps(data, protocol=3)  # GLOBAL opcodes: the module name can be swapped in place
    assert b"cnumpy._core.multiarray\n_reconstruct\n" in blob
    path = _write(tmp_path, blob.replace(b"cnumpy._core.multiarray\n", b"cnumpy.core.multiarray\n"))
    got = features.load_query_pickle(path)["query_prompt"]
    assert got.dtype == np.dtype(">f8") and got.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_the_f2py_pickle_is_refused_without_running_f2py(tmp_path):
    path = _write(tmp_path, b"cnumpy.f2py.__main__\ndtype\n.")  # importing f2py's __main__ runs its command line
    script = ("import sys\nfrom pathlib import Path\nfrom sova_lib.benchmarks.muvr import features\n"
              "try:\n    features.read_query_dict(Path(sys.argv[1]))\nexcept ValueError as err:\n    print(err)\n"
              "print('f2py imported:', 'numpy.f2py.__main__' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.splitlines() == [
        f"{path}: not a readable query dict (numpy.f2py.__main__.dtype is not allowed in a MUVR query dict (only "
        "NumPy arrays))", "f2py imported: False"]


@pytest.mark.parametrize("blob, problem", [
    (pickle.dumps({"query_prompt": __import__("os").getcwd}), "posix.getcwd is not allowed"),
    (pickle.dumps({"query_prompt": np.array([1, "a"], dtype=object)}), "dtype 'O8' is not a plain number type"),
    (pickle.dumps({"query_prompt": b"raw bytes"}), "holds a bytes, not plain data"),
])
def test_anything_but_numbers_and_number_arrays_is_refused(tmp_path, blob, problem):
    with pytest.raises(MuvrDataError, match="not a readable query dict") as err:
        features.read_query_dict(_write(tmp_path, blob))
    assert problem in str(err.value)


def test_a_dtype_state_with_fields_or_an_object_flag_is_refused(tmp_path):
    """``dtype.__setstate__`` could turn a float dtype into one that holds objects: the state is checked first."""
    blob = pickle.dumps(RELEASED, protocol=3)
    # (3, '<', None, None, None, -1, -1, 0): the state numpy writes for a float32, its flags last
    state = re.compile(rb"(X\x01\x00\x00\x00<q.)NNN(J\xff\xff\xff\xffJ\xff\xff\xff\xff)K\x00t", re.DOTALL)
    assert len(state.findall(blob)) == 1  # one dtype, memoised for both arrays
    flagged = state.sub(rb"\1NNN\2K?t", blob)  # every flag set: "holds objects" among them
    assert features.load_query_pickle(_write(tmp_path, flagged))["query_prompt"].dtype == np.float32  # flags unused
    fielded = state.sub(lambda m: m[1] + b"N(tN" + m[2] + b"K\x00t", blob)  # names: () instead of None
    with pytest.raises(MuvrDataError, match="a dtype's state holds fields or sub-arrays"):
        features.load_query_pickle(_write(tmp_path, fielded))


def test_a_nested_list_of_depth_25_is_refused_at_the_seventh_level(tmp_path):
    nested = [1.0]
    for _ in range(25):
        nested = [nested, nested]  # shared: 2**25 leaves in a file of some 200 bytes
    blob = pickle.dumps({"query_prompt": nested})
    assert len(blob) < 250
    with pytest.raises(MuvrDataError, match=r"not a readable query dict \(nested more than 6 levels deep\)"):
        features.read_query_dict(_write(tmp_path, blob))


def test_many_references_to_one_value_are_counted_each_time(tmp_path):
    row = [0.5] * 1000
    blob = pickle.dumps({"query_prompt": [row] * 1001})  # 1,001,000 numbers from one row of 1,000
    with pytest.raises(MuvrDataError, match=r"holds more than 1000000 values"):
        features.read_query_dict(_write(tmp_path, blob))


def test_a_file_larger_than_a_query_dict_is_not_read(tmp_path, monkeypatch):
    path = _write(tmp_path, pickle.dumps(RELEASED))
    monkeypatch.setattr(features, "MAX_QUERY_DICT_BYTES", path.stat().st_size - 1)
    read = []
    monkeypatch.setattr(type(path), "read_bytes", lambda self: read.append(self) or b"")
    with pytest.raises(MuvrDataError, match=rf"{path.stat().st_size} bytes, more than a query dict holds "
                                            rf"\({path.stat().st_size - 1}\); not read"):
        features.read_query_dict(path)
    assert read == []
