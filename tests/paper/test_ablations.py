"""How the ablations notebook (03_ablations) loads Table 6's sentence encoders: the settings it reads from
notebooks/paper/data/table6_encoders/, and its cell that loads each encoder with them. The notebook's tables are
checked by running it (tests/test_notebooks.py)."""
import json

import pandas as pd

from tests.figure_helpers import notebook_cells
from tests.paths import ROOT

from paper.results import paper_results

ENCODERS = ROOT / "notebooks" / "paper" / "data" / "table6_encoders" / "table6_encoders.json"


def _setting_cell(options: dict) -> str:
    """How docs/sovabench.md writes an encoder's settings: the --embedder-option values, or none."""
    cells = [f"{k}={json.dumps(v) if k == 'prompt' else str(v).lower() if isinstance(v, bool) else v}"
             for k, v in options.items()]
    return f"`{' '.join(cells)}`" if cells else "none"


def test_every_table6_encoder_has_its_settings_with_a_reason_and_the_docs_state_them():
    rows = json.loads(ENCODERS.read_text())
    ids = {r["encoder"]: r["id"] for r in rows}
    assert list(ids) == list(dict.fromkeys(paper_results("Table 6")["encoder"]))  # the paper's six, in its order
    assert len(set(ids.values())) == 6
    settings = {r["id"]: r["options"] for r in rows}
    assert settings["Alibaba-NLP/gte-large-en-v1.5"] == {"trust_remote_code": True}
    assert settings["google/embeddinggemma-300m"] == {"prompt_name": "STS"}
    assert settings["intfloat/multilingual-e5-large-instruct"] == {
        "prompt": "Instruct: Retrieve semantically similar text.\nQuery: "}
    assert settings["Qwen/Qwen3-Embedding-0.6B"] == {"prompt": "Instruct: Retrieve semantically similar text\nQuery:"}
    assert settings["all-MiniLM-L6-v2"] == settings["sentence-transformers/clip-ViT-L-14"] == {}
    assert all(len(r["reason"]) > 20 for r in rows)
    page = (ROOT / "docs" / "sovabench.md").read_text()
    for paper_name, enc_id in ids.items():
        row = f"| {paper_name} | `{enc_id}` | {_setting_cell(settings[enc_id])} |"
        assert row in page, row
    assert _setting_cell({"trust_remote_code": True}) == "`trust_remote_code=true`"


def test_the_notebook_loads_each_encoder_with_its_settings(tmp_path, monkeypatch):
    """The notebook's cell that tries the encoders, run on its own (as the kernel runs it, in the notebooks' folder)
    with settings for one id: that id is loaded with them, another id of the same model without."""
    cells = notebook_cells("03_ablations")
    (cell,) = [c for c in cells if "SentenceEncoder(name" in c.source]
    namespace = {"encoders": ["all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"], "cache_dir": tmp_path,
                 "settings": {"all-MiniLM-L6-v2": {"prompt": "Describe: ", "trust_remote_code": True}}}
    monkeypatch.chdir(ROOT / "notebooks")
    exec(cells[1].source.split("\nout = ")[0], namespace)  # the imports of the set-up cell
    exec(cell.source, namespace)
    frame, loaded = namespace["available"], namespace["loaded"]
    assert isinstance(frame, pd.DataFrame) and frame["available"].tolist() == [True, True]
    with_settings, without = loaded["all-MiniLM-L6-v2"], loaded["sentence-transformers/all-MiniLM-L6-v2"]
    assert (with_settings.prompt, with_settings.trust_remote_code) == ("Describe: ", True)
    assert (without.prompt, without.prompt_name, without.trust_remote_code) == (None, None, False)
    assert with_settings.identity == without.identity and with_settings.cache_path.name != without.cache_path.name
