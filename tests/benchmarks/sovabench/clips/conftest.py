"""The videos the fetch tests serve from tests.bucket_server: three MEVA names and tiny AVIs made here."""
from __future__ import annotations

import pytest

from tests.benchmarks.sovabench.clips.test_sources import write_tsv
from tests.helpers_video import numbered_frames, write_video

A = "2018-03-05.13-15-00.13-20-00.bus.G506.r13"
B = "2018-03-11.17-25-02.17-30-02.school.G424.r13"
C = "2018-03-15.15-45-00.15-50-00.bus.G505.r13"


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    """name -> bytes of a tiny AVI: A, B and C have 30 frames at 30 fps (the rows need 21), SHORT 10."""
    folder = tmp_path_factory.mktemp("served")
    out = {}
    for name, frames in ((A, 30), (B, 30), (C, 30), ("short", 10)):
        out[name] = write_video(folder / f"{name}.avi", numbered_frames(frames, 64, 48), 30.0).read_bytes()
    return out


@pytest.fixture()
def tsv(tmp_path):
    return write_tsv(tmp_path / "t.tsv", [f"{v}.vehicle_turns_left.5.20" for v in (A, B, C)]
                     + ["VIRAT_S_000007.vehicle_turns_left.1.2"])


def leave_part(root, name: str, data: bytes, n: int):
    """The ``.part`` an earlier run left of video ``name``: its first ``n`` bytes, with the validators
    tests.bucket_server announces for ``data``; returns its path."""
    import hashlib

    from sova_lib.benchmarks.sovabench.clips.sources import meva_key
    from sova_lib.benchmarks.sovabench.clips.transfer import Announced, record_validators

    part = root / (meva_key(name) + ".part")
    part.parent.mkdir(parents=True, exist_ok=True)
    part.write_bytes(data[:n])
    record_validators(part, Announced(len(data), f'"{hashlib.md5(data).hexdigest()}"', "Mon, 05 Mar 2018 13:20:00 GMT"))
    return part
