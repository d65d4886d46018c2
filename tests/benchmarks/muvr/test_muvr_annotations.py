"""MUVR loaders: the synthetic set in the released layout, aliases, and every error path."""
import json
import os
import pickle
import shutil

import numpy as np
import pytest

from sova_lib.benchmarks import muvr
from sova_lib.benchmarks.muvr import features, qa, retrieval
from sova_lib.benchmarks.muvr.annotation_files import MuvrDataError
from sova_lib.benchmarks.muvr.annotations import clean_description, load_partition
from sova_lib.benchmarks.muvr.synthetic import SYNTHETIC_MODEL
from tests.benchmarks.muvr.fixtures import synthetic


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    return synthetic(tmp_path_factory.mktemp("muvr"), 0, partitions=("news",),
                                topics=2, videos_per_topic=5, distractors=2)


@pytest.fixture
def root(pristine, tmp_path):
    return shutil.copytree(pristine, tmp_path / "data")


def _ann(root, name):
    return root / "annotations" / "retrieval" / "news" / name


def _edit(root, name, change):
    path = _ann(root, name)
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    return path


def test_synthetic_layout_counts_and_determinism(pristine, tmp_path):
    part = load_partition(pristine, "news")
    videos = json.loads(_ann(pristine, "videos.json").read_text())
    assert len(part.queries) == 6 and len(videos) == 2 * 5 + 6 + 2
    # released form: integer ids of videos.json everywhere; the gallery is the listed videos in videos.json order
    name = {v["id"]: v["frames_path"].rsplit("/", 1)[-1] for v in videos}
    rel = json.loads(_ann(pristine, "query_rel_lists.json").read_text())
    assert all(isinstance(r["query_id"], int) and all(isinstance(i, int) for i in r["rel_lists"]["pos_all"]["id_list"])
               for r in rel)
    listed = {name[i] for r in rel for i in r["rel_lists"]["pos_all"]["id_list"]}
    assert part.gallery == tuple(name[v["id"]] for v in videos if name[v["id"]] in listed)
    assert f"{len(videos) - len(listed)} video(s) of videos.json are listed by no query" in part.notes[0]
    assert part.skipped_prompts == 6 and len(part.prompts) == 6 * 4
    assert all(set(p.positives) <= set(part.query(p.query_id).positives) for p in part.prompts)
    assert "SYNTHETIC" in (pristine / "SYNTHETIC.md").read_text()
    again = synthetic(tmp_path / "again", 0, partitions=("news",), topics=2,
                                 videos_per_topic=5, distractors=2)
    for rel in ("annotations/retrieval/news/query_rel_lists.json", "annotations/QA/annotations/news.jsonl"):
        assert (again / rel).read_bytes() == (pristine / rel).read_bytes()
    a = np.load(again / "features/VLMs_1_15" / SYNTHETIC_MODEL / "news" / f"{part.gallery[0]}.npy")
    assert a.shape == (15, 32) and np.array_equal(
        a, np.load(pristine / "features/VLMs_1_15" / SYNTHETIC_MODEL / "news" / f"{part.gallery[0]}.npy"))


def test_official_folder_names_are_aliases(root):
    os.rename(root / "annotations/retrieval/news", root / "annotations/retrieval/geng")
    assert load_partition(root, "others").name == "others"
    assert load_partition(root, "geng").name == "others"
    with pytest.raises(ValueError, match="unknown MUVR partition"):
        load_partition(root, "sports")


def test_clean_description():
    assert clean_description("A [<region>] dog <mask_12>  runs.") == "A dog runs."


def _first_query(data):
    return data[0]["query_id"]


@pytest.mark.parametrize("name, change, key, problem", [
    ("videos.json", lambda d: d.clear() or d.append([1]), "[0]", "expected an object"),
    ("videos.json", lambda d: d[0].pop("frames_path"), "[0].frames_path", "missing"),
    ("videos.json", lambda d: d[0].update(frames_path=3), "[0].frames_path", "expected str"),
    ("queries_en.json", lambda d: d[1].update(frames_path=d[0]["frames_path"]), "[1].frames_path", "appears twice"),
    ("videos.json", lambda d: d[0].pop("id"), "[0].id", "missing"),
    ("videos.json", lambda d: d[1].update(id=d[0]["id"]), "[1].id", "appears twice"),
    ("query_rel_lists.json", lambda d: d[0]["rel_lists"]["pos_all"].update(id_list=7), "[0].rel_lists.pos_all",
     "id_list"),
    ("query_rel_lists.json", lambda d: d[0]["rel_lists"]["pos_all"]["id_list"].append(99999),
     "[0].rel_lists.pos_all[", "id 99999 is in no record of videos.json"),
    ("query_rel_lists.json", lambda d: d[0]["rel_lists"]["pos_all"]["id_list"].append("100"),
     "[0].rel_lists.pos_all[", "id '100' is in no record of videos.json"),
    ("query_rel_lists.json", lambda d: d[0]["rel_lists"]["pos_all"]["id_list"].append("BVsyn0t0v00"),
     "[0].rel_lists.pos_all[", "lists the video name 'BVsyn0t0v00'"),
    ("query_rel_lists.json", lambda d: d[0]["rel_lists"]["pos_all"]["id_list"].append([1]),
     "[0].rel_lists.pos_all[", "got list"),
    ("query_tag_lists.json", lambda d: next(iter(d[0]["tag_lists"].values()))["id_list"].append("BVsyn0d00"),
     "[0].tag_lists[", "lists the video name 'BVsyn0d00'"),
    ("query_tags.json", lambda d: d.update(x=[1]), "'x'", "list of tag phrases"),
    # a video name as query_id: the earlier string form, named (the official loader would skip every entry)
    ("query_rel_lists.json", lambda d: d[0].update(query_id="BVsyn0t0q0"), "[0].query_id",
     "lists the video name 'BVsyn0t0q0'"),
    ("query_rel_lists.json", lambda d: d[0].update(query_id=[3]), "[0].query_id", "got list"),
])
def test_annotation_errors_name_file_and_key(root, name, change, key, problem):
    path = _edit(root, name, change)
    with pytest.raises(MuvrDataError) as err:
        load_partition(root, "news")
    assert str(err.value).startswith(str(path)) and problem in str(err.value)
    if key is not None:
        assert key in str(err.value)


def test_an_id_in_no_videos_json_record_joins_the_gallery_only_when_asked(root):
    _edit(root, "query_rel_lists.json", lambda d: d[0]["rel_lists"]["pos_all"]["id_list"].extend([99999, 99999]))
    part = load_partition(root, "news", join_listed=True)
    assert part.gallery[-1] == "#99999" and part.gallery.count("#99999") == 1
    assert "#99999" in part.queries[0].positives and any("1 listed id in no record" in n for n in part.notes)
    score = retrieval.evaluate_vectors([part], muvr.released_vectors(root / "features/VLMs_1_15" / SYNTHETIC_MODEL))
    assert any("1 gallery video has no vectors" in n for n in score.notes)
    # a video name is never joined: the released files hold ids, and the official loader resolves only ids
    _edit(root, "query_rel_lists.json", lambda d: d[0]["rel_lists"]["pos_all"]["id_list"].append("BVsyn0t0v00"))
    with pytest.raises(MuvrDataError, match="lists the video name"):
        load_partition(root, "news", join_listed=True)


def test_string_ids_resolve_only_when_videos_json_uses_them(root):
    """The official loader keys vid_name by videos.json's own id values (cuvr.py:96): string ids work if they are those."""
    before = load_partition(root, "news")
    as_text = {}

    def videos(d):
        for v in d:
            as_text[v["id"]] = f"v{v['id']}"
            v["id"] = as_text[v["id"]]

    _edit(root, "videos.json", videos)

    def lists(d):
        for r in d:
            r["query_id"] = as_text[r["query_id"]]
            for key in ("rel_lists", "tag_lists"):
                for value in r.get(key, {}).values():
                    value["id_list"] = [as_text[i] for i in value["id_list"]]

    _edit(root, "query_rel_lists.json", lists)
    _edit(root, "query_tag_lists.json", lists)
    after = load_partition(root, "news")
    assert after.gallery == before.gallery and after.queries == before.queries and after.prompts == before.prompts


def test_a_query_clip_is_flagged(root):
    _edit(root, "queries_en.json", lambda d: d[0].update(Clip="00.00.05-00.00.09"))
    assert any("1 query names a Clip segment" in n for n in load_partition(root, "news").notes)


def test_missing_and_broken_files(root):
    _ann(root, "query_tags.json").unlink()
    with pytest.raises(MuvrDataError, match="query_tags.json: file not found"):
        load_partition(root, "news")
    _ann(root, "videos.json").write_text("[{\"id\": 1,\n")
    with pytest.raises(MuvrDataError, match=r"videos.json: line \d+: not valid JSON"):
        load_partition(root, "news")
    shutil.rmtree(root / "annotations")
    with pytest.raises(MuvrDataError, match="no such folder"):
        load_partition(root, "news")


def _features(root):
    return root / "features/VLMs_1_15" / SYNTHETIC_MODEL


def test_feature_errors(root):
    part = load_partition(root, "news")
    folder = _features(root) / "news"
    vid, qid = part.gallery[0], part.queries[0].id
    np.save(folder / f"{vid}.npy", np.zeros((15, 32), np.float32))
    with pytest.raises(MuvrDataError, match=f"{vid}.npy: values"):
        features.load_frames(folder, [vid])
    np.save(folder / f"{vid}.npy", np.ones((2, 3, 4), np.float32))
    with pytest.raises(MuvrDataError, match="shape"):
        features.load_frames(folder, [vid])
    np.save(folder / f"{vid}.npy", np.ones((15, 16), np.float32))
    with pytest.raises(MuvrDataError, match="16 dimensions, others 32"):
        features.load_frames(folder, [part.gallery[1], vid])
    np.save(folder / f"{vid}.npy", np.ones((15, 32), np.float32))
    (folder / f"{qid}.npy").unlink()
    with pytest.raises(MuvrDataError, match=f"{qid}.npy: file not found"):
        muvr.released_vectors(_features(root), query="video")(part)
    (folder / f"{qid}_query_dict.pkl").write_bytes(pickle.dumps({"tags": {}}))
    with pytest.raises(MuvrDataError, match="query_prompt: missing"):
        features.read_query_dict(folder / f"{qid}_query_dict.pkl")
    (folder / f"{qid}_query_dict.pkl").write_bytes(pickle.dumps({"query_prompt": os.getcwd}))
    with pytest.raises(MuvrDataError, match="not allowed"):
        features.read_query_dict(folder / f"{qid}_query_dict.pkl")
    with pytest.raises(MuvrDataError, match="no such folder"):
        muvr.released_vectors(_features(root) / "elsewhere")(part)
    np.savez(root / "bad.npz", ids=np.array(["a"]))
    with pytest.raises(MuvrDataError, match="owner: missing"):
        features.npz_vectors(root / "bad.npz")


def _qa_path(root):
    return root / "annotations" / "QA" / "annotations" / "news.jsonl"


@pytest.mark.parametrize("change, problem", [
    (lambda lines: lines[:1], "odd number of questions"),
    (lambda lines: ["{"] + lines[1:], "line 1: not valid JSON"),
    (lambda lines: [json.dumps({k: v for k, v in json.loads(lines[0]).items() if k != "Tag"})] + lines[1:],
     "line 1: Tag: missing"),
    (lambda lines: [lines[1], lines[0]] + lines[2:], "line 1: Label: expected 1"),
    (lambda lines: [lines[0], json.dumps({**json.loads(lines[1]), "Query": "other"})] + lines[2:],
     "line 2: Query: differs"),
])
def test_qa_file_errors(root, change, problem):
    path = _qa_path(root)
    path.write_text("\n".join(change(path.read_text().splitlines())) + "\n")
    with pytest.raises(MuvrDataError, match=problem):
        qa.load_qa(root, ["news"])


def test_qa_questions(pristine):
    questions = qa.load_qa(pristine, ["news"])
    assert [q.id for q in questions] == ["news/0", "news/1", "news/2", "news/3"]
    assert [q.label for q in questions] == [1, 0, 1, 0] and questions[0].tag == "" and questions[2].tag.startswith("+")


def test_qa_file_under_an_official_alias(root):
    qa_dir = root / "annotations" / "QA" / "annotations"
    (qa_dir / "news.jsonl").rename(qa_dir / "geng.jsonl")
    assert [q.id for q in qa.load_qa(root, ["others"])][:2] == ["others/0", "others/1"]
