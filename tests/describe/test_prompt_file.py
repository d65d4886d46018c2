"""Prompts files: the records read and checked, and ``sova describe --prompts`` asking each item exactly its record."""
import json

import pytest
from PIL import Image

from sova_lib.cli import main
from sova_lib.describe.backends.openai import encode_jpeg
from sova_lib.describe.prompt_file import ItemPrompt, PromptFileError, read_prompt_file


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_records_are_read_as_written(tmp_path):
    path = _write(tmp_path / "p.jsonl", [
        {"id": 7, "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": ["a", "b"]}],
         "media_at": 2, "frames": {"fps": 0.5}},
        {"id": "x", "messages": [{"role": "user", "content": "only"}]}])
    found = read_prompt_file(path)
    assert found.prompts == {"7": ItemPrompt("S", ("a", "b"), 2), "x": ItemPrompt(None, ("only",), 0)}
    assert found.prompts["7"].frames == {"fps": 0.5} and found.lines == {"7": 1, "x": 2}
    assert found.prompts["7"].request_fields() == {"prompt": "a\nb", "system_prompt": "S", "parts": ("a", "b"),
                                                   "media_at": 2}
    assert found.prompts["7"].sha256 != ItemPrompt("S", ("a", "b"), 1, {"fps": 0.5}).sha256
    with pytest.raises(PromptFileError) as err:
        found.check_ids(["7", "y", "z"])
    assert err.value.problems == [f"{path}: no record for item id 'y' (and 1 more)",
                                  f"{path}, line 2: id 'x' is no item of this run"]


def test_sova_describe_sends_the_record(tmp_path, server_factory, capsys):
    folder = tmp_path / "images"
    folder.mkdir()
    image = Image.new("RGB", (32, 24), (200, 10, 10))
    image.save(folder / "red.png")
    prompts = _write(tmp_path / "p.jsonl", [
        {"id": "red", "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": ["A", "B"]}],
         "media_at": 1}])
    server = server_factory()
    argv = ["describe", "--videos", str(folder), "--backend", "openai", "--model", "m", "--base-url", server.url,
            "--cache-dir", str(tmp_path / "cache"), "--no-progress", "--prompts", str(prompts)]
    assert main(argv) == 0
    [request] = server.requests
    assert request["body"]["messages"] == [
        {"role": "system", "content": "S"},
        {"role": "user", "content": [{"type": "text", "text": "A"},
                                     {"type": "image_url", "image_url": {"url": encode_jpeg(image)}},
                                     {"type": "text", "text": "B"}]}]
    folder_one, = (tmp_path / "cache" / "descriptions").iterdir()
    _write(prompts, [{"id": "red", "messages": [{"role": "user", "content": "C"}]}])
    assert main(argv) == 0 and len(server.requests) == 2  # another file: another cache folder, asked again
    assert len(list((tmp_path / "cache" / "descriptions").iterdir())) == 2
    capsys.readouterr()
    _write(prompts, [{"id": "blue", "messages": [{"role": "user", "content": "C"}]}])
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"{prompts}: no record for item id 'red'", f"{prompts}, line 1: id 'blue' is no item of this run",
                   f"sova: error: {prompts}: 2 problem(s) in the prompts file"]


def test_transformers_conversation_places_the_media_among_the_parts():
    from types import SimpleNamespace

    from sova_lib.describe.backends.transformers import _ImageTextToText
    from sova_lib.describe.contract import DescribeRequest

    stub = SimpleNamespace(_kind=lambda request: "image")
    request = DescribeRequest("a", [Image.new("RGB", (4, 4))] * 2, "A\nB", "S", is_video=False, parts=("A", "B"),
                              media_at=1)
    assert _ImageTextToText.conversation(stub, request) == [
        {"role": "system", "content": [{"type": "text", "text": "S"}]},
        {"role": "user", "content": [{"type": "text", "text": "A"}, {"type": "image"}, {"type": "image"},
                                     {"type": "text", "text": "B"}]}]
    plain = DescribeRequest("a", [Image.new("RGB", (4, 4))], "Describe.", is_video=False)
    assert _ImageTextToText.conversation(stub, plain) == [
        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Describe."}]}]


def test_text_with_line_separators_of_unicode_reads_back_whole(tmp_path):
    question = "Is it red\u2028or blue?\x85Say\x0conce.\u2029"
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"id": "1", "messages": [{"role": "user", "content": question}]},
                               ensure_ascii=False) + "\n", encoding="utf-8")
    assert read_prompt_file(path).prompts == {"1": ItemPrompt(None, (question,), 0)}


def test_each_malformed_record_is_one_line_naming_file_and_line(tmp_path):
    user = '"messages": [{"role": "user", "content": "q"}]'
    records = [
        b'{"id": "0", ' + user.encode() + b'}',
        b'{"id": "1", "messages": [{"role": "system"}, {"role": "user", "content": "q"}]}',
        b'{"id": "2", "messages": [{"role": "user", "content": "caf\xe9"}]}',
        b'{"id": "3", ' + user.encode() + b', "frames": {"nframe": 1e12}}',
        b'{"id": "4", ' + user.encode() + b', "frames": {"nframe": Infinity}}',
        b'{"id": "5", ' + user.encode() + b', "frames": {"fps": NaN}}',
        b'{"id": "6", ' + user.encode() + b', "frames": {"fps": 5000}}',
        b'{"id": "7", ' + user.encode() + b', "frames": {"indices": [' + b", ".join([b"1"] * 10_001) + b"]}}",
        b'{"id": "8", "messages": [{"role": "user"}]}',
    ]
    column = records[2].index(bytes([0xE9])) + 1  # 58
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"\n".join(records) + b"\n")
    with pytest.raises(PromptFileError) as err:
        read_prompt_file(path)
    assert err.value.problems == [
        f"{path}, line 2: the system message's content must be text, not NoneType",
        f"{path}, line 3: not UTF-8 text (byte 0xe9 at column {column})",
        f"{path}, line 4: 'frames.nframe' is 1000000000000.0, more than 10000",
        f"{path}, line 5: 'frames.nframe' must be a finite number >= 0 or null, not inf",
        f"{path}, line 6: 'frames.fps' must be a finite number >= 0 or null, not nan",
        f"{path}, line 7: 'frames.fps' is 5000, more than 1000",
        f"{path}, line 8: 'frames.indices' lists 10001 frames, more than 10000",
        f"{path}, line 9: the user message's content must be text, not NoneType"]
    assert str(err.value) == f"{path}: 8 problem(s) in the prompts file"
