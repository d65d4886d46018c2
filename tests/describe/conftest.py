"""Fixtures of the Ray engine tests: one local Ray instance per test module, and a folder of videos."""
import os
import shutil

import pytest

from sova_lib.video.frames import example_videos
from tests.paths import ROOT
from tests.ray_support import local_ray


@pytest.fixture(scope="module")
def ray_address():
    """One local Ray instance (2 CPUs, no dashboard) for the whole module; its GCS address for other drivers.

    Ray's processes start at a higher priority (the machine may be busy), then run at this process's,
    without the slow import that tests/ray_lean/ explains (``tests.ray_support``). A machine too busy for Ray's node to come up
    at all (its agent has a fixed 15 s) skips the module.
    """
    ray = pytest.importorskip("ray")
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    session = local_ray(num_cpus=2, nice=-10 if os.geteuid() == 0 else None)
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "tests" / "ray_lean"), str(ROOT), saved) if p)
    try:
        session.__enter__()
    except Exception as err:  # noqa: BLE001 - Ray raises a bare Exception when its node does not come up
        if "timed out during startup" not in str(err):
            raise
        pytest.skip(f"a local Ray instance did not start on this machine: {err}")
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved
    try:
        assert session.started and os.getpriority(os.PRIO_PROCESS, 0) == nice
        yield ray.get_runtime_context().gcs_address
    finally:
        session.__exit__(None, None, None)
    assert not ray.is_initialized()


@pytest.fixture
def media(tmp_path):
    """The three bundled excerpts (each under two ids), a broken video and a missing one."""
    folder = tmp_path / "media"
    folder.mkdir()
    for path in example_videos():
        shutil.copy(path, folder / path.name)
        shutil.copy(path, folder / f"{path.stem}-copy{path.suffix}")
    (folder / "broken.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 8)
    return folder
