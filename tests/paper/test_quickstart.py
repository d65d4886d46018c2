"""The quickstart notebook's own cells (``notebooks/00_quickstart.py``), each run on values chosen here: the items,
the request a describer is sent, the describing run, a query's neighbours and the direction score."""
import json
import shutil

import numpy as np
import pytest

from sova_lib.benchmarks.excerpts import DIRECTION_PROTOCOL, REVERSED_SUFFIX, direction_protocol, example_clips
from sova_lib.item_vectors import embed_descriptions
from sova_lib.sentences import split
from sova_lib.similarity import set_similarity
from sova_lib.video.frames import example_videos, sample_frames
from tests.figure_helpers import holding, run_cells
from tests.paths import ROOT

#: The committed description cache of the quickstart (read only: its manifest names what wrote the texts).
COMMITTED = next((ROOT / "cache" / "descriptions").glob("quickstart-motion-*"))

#: A marker of each cell run here: the items, the request, the describer, the describing run, the neighbours (two
#: cells), the direction score and the answer shown.
ITEMS, REQUEST, DESCRIBER = "example_clips(videos", "build_request(item", "make_describer(backend"
DESCRIBE, NEIGHBOURS, TOP, SCORE = "describe_items(describer", "rows = []", "top = pd.DataFrame(rows)", "made = ["
ANSWER = "done, errors = read_descriptions(folder)"


class AxisEncoder:
    """Each distinct text on its own axis, except texts listed in ``same``, which share one."""

    name = "axis"

    def __init__(self, same=()):
        self.same, self.axis = set(same), {}

    def encode(self, texts):
        out = np.zeros((len(texts), 32), np.float32)
        for k, t in enumerate(texts):
            key = "shared" if t in self.same else t
            self.axis.setdefault(key, len(self.axis))
            out[k, self.axis[key]] = 1
        return out


def quickstart(tmp_path, *markers: str, parameters: dict | None = None, **names) -> tuple[dict, object]:
    """The quickstart's cells holding ``markers``, in that order (``run_cells``), its outputs under ``tmp_path``:
    the namespace and the last cell's closing value."""
    return run_cells("00_quickstart", holding(*markers), names=names,
                     parameters={"figures_dir": str(tmp_path / "figures"), "cache_dir": str(tmp_path / "cache"),
                                 **(parameters or {})})


TEXTS = {"a": "A person walks left. Two people are seen.", "b": "A car turns.\nTwo people are seen.",
         "c": "Nothing moves."}


def _items(tmp_path, **parameters):
    return quickstart(tmp_path, ITEMS, parameters=parameters)[0]["items"]


def test_example_items_and_their_frames(tmp_path):
    items = _items(tmp_path)
    assert [it.id for it in items[:2]] == [example_videos()[0].stem, example_videos()[0].stem + "-reversed"]
    assert len(items) == 2 * len(example_videos()) and [it.reverse for it in items[:2]] == [False, True]
    assert [it.id for it in _items(tmp_path, with_reversed=False)] == [p.stem for p in example_videos()]
    # the quickstart's filmstrips: each item's frames as the sampler picks them (its cells call sample_frames so)
    fwd, rev = (sample_frames(it.path, rate=1.0, window=it.window, crop=it.crop, reverse=it.reverse)
                for it in items[:2])
    assert len(fwd.images) == len(rev.images) and fwd.timestamps[0] == 0
    assert np.array_equal(np.asarray(fwd.images[0]), np.asarray(rev.images[-1]))  # reversed: ends where it starts


def test_the_illustrative_answer_is_a_paragraph_on_three_lines():
    """The hand-written answer the quickstart reads (from its own folder) and splits, line by line."""
    answer = (ROOT / "notebooks" / "paper" / "data" / "quickstart" / "hand_written_answer.txt").read_text()
    lines = [split(line) for line in answer.splitlines() if line.strip()]
    assert [len(pieces) for pieces in lines] == [5, 1, 1]  # NLTK cuts after "e.g.": five pieces on the first line
    assert lines[0][2:4] == ["Several pedestrians, e.g.",
                             "a man in a dark jacket, walk across the pavement from right to left at a steady pace."]
    assert sum(lines, []) == split(answer)


def _request_table(tmp_path, item, prompt):
    """What the request cell shows for ``item`` (the query) at 1 frame per second with ``prompt``."""
    return quickstart(tmp_path, REQUEST, parameters={"fps": 1.0, "prompt": prompt, "query": item.id}, items=[item],
                      videos_by_id={item.id: item})[1]


def test_a_query_that_is_no_clip_is_refused_naming_the_clips(tmp_path):
    """A mistyped query (or the default one beside your own videos) stops the items cell, naming the clips."""
    ids = [it.id for it in _items(tmp_path)]
    assert len(ids) == 6
    with pytest.raises(ValueError) as err:
        _items(tmp_path, query="vtest_walkway")
    assert str(err.value) == "query 'vtest_walkway' is not one of the clips: " + ", ".join(ids)


def test_a_query_without_a_description_is_stood_for_by_the_first_clip_described(tmp_path, capsys):
    """A query clip the describer failed on: the answer cell says which clip stands for it, and shows that one."""
    folder = tmp_path / COMMITTED.name
    shutil.copytree(COMMITTED, folder)
    lines = (folder / "descriptions.jsonl").read_text().splitlines(keepends=True)
    kept = [line for line in lines if json.loads(line)["id"] != "vtest_walkway_0200-0259"]
    assert len(kept) == len(lines) - 1 == 5
    (folder / "descriptions.jsonl").write_text("".join(kept))
    ran, _ = quickstart(tmp_path, ITEMS, ANSWER, folder=folder)
    assert ran["query"] == "vtest_lawn_0600-0659" and ran["texts"].keys() == {json.loads(x)["id"] for x in kept}
    shown = capsys.readouterr().out
    assert shown.startswith("1 clip(s) without a description:\n")
    assert "vtest_walkway_0200-0259 has no description; vtest_lawn_0600-0659 stands for it below\n" in shown
    assert shown.endswith(f"the answer for vtest_lawn_0600-0659:\n\n{ran['texts']['vtest_lawn_0600-0659']}\n")


def test_request_table_is_what_the_runner_sends(tmp_path):
    item = example_clips(with_reversed=False)[0].item()
    table = _request_table(tmp_path, item, "task-aware")
    sent = dict(zip(table["part"], table["sent"]))
    assert sent["instruction"] == "Briefly classify the actions occurring in this video."
    assert sent["system prompt"].startswith("You are an expert video analysis model")
    sampled = sample_frames(item.path, rate=1.0, window=item.window, crop=item.crop, reverse=item.reverse)
    frames, times = sampled.images, sampled.timestamps
    width, height = frames[0].size
    assert sent["frames"] == f"{len(frames)} RGB images of {width} x {height} pixels"
    assert sent["frame times (s)"] == ", ".join(f"{t:.1f}" for t in times)
    assert dict(zip(*_request_table(tmp_path, item, "general").values.T))["system prompt"] == "(none)"


def _neighbours(tmp_path, items, query):
    """The neighbours the two cells of the notebook list for ``query`` among ``items`` (``TEXTS``), top 2."""
    return quickstart(tmp_path, NEIGHBOURS, TOP, parameters={"top_k": 2}, items_vectors=items, texts=TEXTS,
                      query=query, clip_ids=list(TEXTS))[1]


def test_neighbours_explain_the_match(tmp_path):
    enc = AxisEncoder(same={"A car turns.", "Nothing moves."})
    items = embed_descriptions(TEXTS, enc)
    top = _neighbours(tmp_path, items, "b")
    assert top.columns.tolist() == ["rank", "id", "max cosine", "rank by mean", "mean cosine", "query sentence",
                                    "matched sentence"]
    assert top["id"].tolist() == ["a", "c"]  # both reach 1; ties keep the order of the items
    assert top.loc[0, "query sentence"] == top.loc[0, "matched sentence"] == "Two people are seen."
    assert top.loc[1, "matched sentence"] == "Nothing moves." and top.loc[1, "max cosine"] == 1.0
    assert top["mean cosine"].tolist() == [0.25, 0.5]  # 1 of 4 sentence pairs match; 1 of 2
    assert top["rank by mean"].tolist() == [2, 1]  # the mean ranks c first
    assert (tmp_path / "figures" / "00_quickstart_neighbours.csv").read_text().splitlines()[1:] == [
        "1,a,1.0,2,0.25,Two people are seen.,Two people are seen.", "2,c,1.0,1,0.5,A car turns.,Nothing moves."]
    with pytest.raises(KeyError, match="'q' is not one of the 3 item ids"):
        _neighbours(tmp_path, items, "q")


class CountingDescriber:
    """A describer that answers with the number of frames it was shown, and counts its calls."""

    name = "counting"
    max_batch_size = 1
    max_concurrency = 1

    def __init__(self):
        self.calls = 0

    def config(self):
        return {"model": "counting"}

    def describe(self, requests):
        self.calls += len(requests)
        return [f"{len(r.frames)} frames." for r in requests]


def _describe(tmp_path, describer, items, fps):
    """The folder the notebook's describing cell names after describing ``items`` at ``fps`` (prompt ``general``)."""
    return quickstart(tmp_path, DESCRIBE, parameters={"fps": fps},
                      describer=describer, items=items)[0]["folder"]


def test_the_describing_cell_leaves_a_complete_cache_untouched(tmp_path):
    from sova_lib.item_vectors import read_descriptions

    items = [clip.item() for clip in example_clips()][:3]
    describer = CountingDescriber()
    folder = _describe(tmp_path, describer, items[:2], 1.0)
    assert describer.calls == 2 and set(read_descriptions(folder)) == {items[0].id, items[1].id}
    manifest = (folder / "manifest.json").read_bytes()
    again = _describe(tmp_path, describer, items[:2], 1.0)
    assert again == folder and describer.calls == 2 and (folder / "manifest.json").read_bytes() == manifest
    _describe(tmp_path, describer, items, 1.0)
    assert describer.calls == 3 and len(read_descriptions(folder)) == 3  # only the missing item
    other = _describe(tmp_path, describer, items[:1], 2.0)
    assert other != folder and describer.calls == 4  # another sampling rate is another cache


def test_motion_describer_on_the_excerpts_gives_clips_that_differ(encoder, tmp_path):
    """No sentence is shared by every answer, and the clip-similarity matrix is not constant."""
    from sova_lib.item_vectors import read_descriptions

    ran, _ = quickstart(tmp_path, ITEMS, DESCRIBER, DESCRIBE)  # the defaults: the motion describer at 2 fps
    texts = read_descriptions(ran["folder"])
    assert len(texts) == 6 and ran["folder"].parent == tmp_path / "cache" / "descriptions"
    assert not set.intersection(*(set(split(t)) for t in texts.values()))
    vectors = embed_descriptions(texts, encoder)
    off = set_similarity(vectors, vectors)[~np.eye(len(texts), dtype=bool)]
    assert off.max() - off.min() > 0.05 and (off < 0.999).sum() >= len(off) // 2


def _score(tmp_path, items, name="perfect", videos=()):
    """The two records the notebook's score cell makes of ``items`` (``ItemVectors``, encoder ``axis``), the
    committed cache standing for the folder that wrote their texts."""
    return quickstart(tmp_path, SCORE, parameters={"videos": list(videos)}, items_vectors=items,
                      names={"short": name}, folder=COMMITTED, encoder=AxisEncoder())[0]["made"]


def test_direction_scores_beside_a_random_ranking(tmp_path):
    """Forward clips say one thing, reversed clips another: every query finds its two relevant clips first."""
    from sova_lib.evaluation import CoverageError

    ids = [clip.index for clip in example_clips()]
    texts = {i: "It plays backwards." if i.endswith(REVERSED_SUFFIX) else "It plays forwards." for i in ids}
    made = _score(tmp_path, embed_descriptions(texts, AxisEncoder()))
    assert [(r["kind"], r["protocol"], r["benchmark"]) for r in made] == [
        ("description cache", "quickstart-direction", "the bundled examples"),
        ("baseline", "quickstart-direction", "the bundled examples")]
    assert made[0]["cache"] == COMMITTED.name and made[0]["encoder"] == "axis" and made[1]["baseline"] == "random-ranking"
    assert (made[0]["model"], made[0]["prompt"], made[0]["fps"]) == ("classical-motion", "general", 2.0)
    # random ranking, 2 relevant of 5: (1/5) * sum_k (1 + (k-1)/4) / k
    random = 100 * sum((1 + (k - 1) / 4) / k for k in range(1, 6)) / 5
    assert [r["source"] for r in made] == ["perfect + max cosine", "random ranking (exact expected AP)"]
    assert [r["value"] for r in made] == [100.0, round(random, 2)] and round(random, 2) == 59.25
    assert [r["n_queries"] for r in made] == [6, 6] and [r["tie_spread"] for r in made] == [0.0, 0.0]
    same = _score(tmp_path, embed_descriptions({i: "A clip." for i in ids}, AxisEncoder()))
    assert [r["value"] for r in same] == [round(random, 2)] * 2  # all tied: exactly a random ranking
    assert same[0]["tie_spread"] == round(100 - 100 * np.mean([1 / 4, 2 / 5]), 2)
    with pytest.raises(CoverageError, match="the input covers none of the 6 clips"):  # other videos' clips
        _score(tmp_path, embed_descriptions({"x": "a", "y": "b"}, AxisEncoder()))


def test_the_direction_question_on_your_own_videos(tmp_path):
    """Two videos of the user's, each also reversed: the explorer and the score use their clips, not the bundled six."""
    import shutil

    from sova_lib.protocols import get_protocol
    from sova_lib.report import explore

    assert direction_protocol() is get_protocol(DIRECTION_PROTOCOL)
    source = example_videos()[0]
    videos = [shutil.copy(source, tmp_path / f"street{source.suffix}"), shutil.copy(source, tmp_path / f"square{source.suffix}")]
    proto = direction_protocol(videos)
    assert proto.name == "quickstart-direction (your videos)"
    assert proto.ids().tolist() == ["street", "street-reversed", "square", "square-reversed"]
    # street-reversed is described as if it played forwards: it ties with square for the forward queries
    texts = {"street": "It plays forwards.", "street-reversed": "It plays forwards.", "square": "It plays forwards.",
             "square-reversed": "It plays backwards."}
    items = embed_descriptions(texts, AxisEncoder())
    by_id = {it.id: it for it in _items(tmp_path / "items", videos=videos, query="street")}
    # street: square (relevant) and street-reversed tie at 1, square-reversed 0: AP (1 + 1/2) / 2 = 3/4
    view = explore.show({"hand": (items, texts)}, [proto], videos=by_id, query="street", k=2, interactive=False)
    assert view.ap == pytest.approx(0.75) and view.protocol == proto.name and view.summary()["AP"] == 75.0
    assert view.hits["id"].tolist() == ["street-reversed", "square"] and view.hits["relevant"].tolist() == [False, True]
    ex = explore.Explorer({"hand": (items, texts)}, [proto], videos=by_id, query="square", k=3)
    assert ex.view.query == "square" and ex.view.ap == pytest.approx(0.75)
    # mAP by hand: street 3/4, square 3/4, street-reversed 1/3 (its one relevant clip last of 3), square-reversed
    # (all three tied at 0, one relevant) (1 + 1/2 + 1/3) / 3 = 11/18: (3/4 + 3/4 + 1/3 + 11/18) / 4 = 11/18
    made = _score(tmp_path, items, name="hand", videos=videos)
    assert made[0]["protocol"] == proto.name and made[0]["value"] == round(100 * 11 / 18, 2) and [r["n_queries"] for r in made] == [4, 4]
    # without reversed copies every clip plays forward: every other clip is relevant
    forward = direction_protocol(videos, with_reversed=False)
    assert forward.ids().tolist() == ["street", "square"]
    one = explore.query_view(forward, embed_descriptions({"street": "a", "square": "b"}, AxisEncoder()), "street")
    assert one.ap == 1.0 and one.hits["relevant"].tolist() == [True]
