
import pytest

from sova_lib.report import reproduce
from tests.paths import ROOT  # noqa: E402


def test_find_notebooks_in_order(tmp_path):
    found = reproduce.find_notebooks(ROOT / "notebooks")
    assert [p.name for p in found] == ["00_quickstart.py", "01_benchmark.py", "02_results.py", "03_ablations.py",
                                       "04_errors.py", "05_muvr.py", "06_vantage.py", "07_image_tasks.py"]
    with pytest.raises(FileNotFoundError, match="no notebooks"):
        reproduce.find_notebooks(tmp_path)
    with pytest.raises(FileNotFoundError, match=f"^--notebooks {tmp_path / 'gone'}: no such folder; run sova reproduce"):
        reproduce.find_notebooks(tmp_path / "gone")


def test_reproduce_command_options():
    from sova_lib.cli import build_parser

    args = build_parser().parse_args(["reproduce", "--skip-notebooks", "--build", "b"])
    assert args.skip_notebooks and args.build == "b" and args.notebooks == "notebooks"  # under the current folder


def test_a_notebook_runs_without_kernel_log_lines(tmp_path, capfd, monkeypatch):
    """No '[IPKernelApp] WARNING' (unencrypted TCP) or 'ERROR | KeyboardInterrupt' (shutdown) on stderr."""
    from tests.test_notebooks import _kernel_env

    _kernel_env(tmp_path, monkeypatch)
    source = tmp_path / "00_tiny.py"
    header = (ROOT / "notebooks" / "00_quickstart.py").read_text().split("# %%")[0]  # jupytext header, kernelspec
    source.write_text(header + '# %% [markdown]\n# # Tiny\n\n# %% tags=["parameters"]\nfigures_dir = "."  # out\n\n'
                      '# %%\nfrom pathlib import Path\n\nPath(figures_dir, "done.txt").write_text("ok")\n')
    reproduce.run_notebook(source, tmp_path / "build" / "00_tiny.ipynb", {"figures_dir": str(tmp_path)})
    assert (tmp_path / "done.txt").read_text() == "ok"
    out, err = capfd.readouterr()
    assert "IPKernelApp" not in err and "KeyboardInterrupt" not in err, err


def test_a_notebook_runs_in_its_folder_and_imports_the_helper_package_beside_it(tmp_path, monkeypatch):
    """The kernel's working folder is the notebooks folder, so ``import paper`` finds ``<folder>/paper``."""
    from tests.test_notebooks import _kernel_env

    _kernel_env(tmp_path, monkeypatch)
    folder = tmp_path / "nbs"
    (folder / "paper").mkdir(parents=True)
    (folder / "paper" / "__init__.py").write_text('WHERE = "the helper beside the notebook"\n')
    header = (ROOT / "notebooks" / "00_quickstart.py").read_text().split("# %%")[0]
    (folder / "00_helper.py").write_text(header + '# %% [markdown]\n# # Helper\n\n# %%\nimport os\n\nimport paper\n\n'
                                         'open("done.txt", "w").write(f"{paper.WHERE} in {os.getcwd()}")\n')
    monkeypatch.chdir(tmp_path)  # the command's own folder is another one
    reproduce.run_notebook(reproduce.find_notebooks("nbs")[0], tmp_path / "build" / "00_helper.ipynb")
    assert (folder / "done.txt").read_text() == f"the helper beside the notebook in {folder.resolve()}"


def test_quiet_manager_interrupts_only_a_running_kernel():
    calls = []

    class Base:
        shutting_down = False

        async def _async_interrupt_kernel(self):
            calls.append("interrupt")

    import asyncio

    manager = reproduce._quiet_manager(Base)()
    asyncio.run(manager._async_interrupt_kernel())
    manager.shutting_down = True
    asyncio.run(manager._async_interrupt_kernel())
    assert calls == ["interrupt"]
