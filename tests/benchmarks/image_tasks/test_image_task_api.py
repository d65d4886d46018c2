"""``sova_lib.benchmarks.image_tasks``'s functions, as the command and the notebooks call them."""
import numpy as np
import pytest
from PIL import Image

from sova_lib.benchmarks import image_tasks


def test_items_are_keyed_as_the_tasks_look_them_up(tmp_path):
    for name in ("000000017697.jpg", "street.png", "notes.txt"):
        Image.fromarray(np.zeros((4, 4, 3), np.uint8)).save(tmp_path / name, format="PNG")
    found = image_tasks.items(str(tmp_path))
    # a digit-only stem is an integer id (the tasks' image keys); other files than images are not items
    assert [(i.id, i.path.name, i.is_video) for i in found] == [(17697, "000000017697.jpg", False),
                                                                ("street", "street.png", False)]
    with pytest.raises(ValueError, match="matches no image file"):
        image_tasks.items(str(tmp_path / "*.gif"))


def test_the_random_row_records_itself():
    result = image_tasks.evaluate_files("vsr-zeroshot", baseline="random")
    # two choices per VSR item: 1/2 each, 50 (docs/image-tasks.md: 50.0 over the 1,222 items)
    assert (result.value, result.n_items) == (50.0, 1222)
    record = result.to_record()
    assert (record["kind"], record["source"], record["baseline"], record["encoder"]) == ("baseline", "random",
                                                                                         "random", None)
    assert result.text() == "vsr-zeroshot: accuracy = 50.00  over 1222 items (ties: n/a)"


def test_vectors_need_the_text_model_and_only_they_do():
    with pytest.raises(ValueError, match="--embeddings on an image task needs --text-model"):
        image_tasks.evaluate_files("vsr-zeroshot", embeddings="v.npz")
    with pytest.raises(ValueError, match="--text-model goes with --embeddings"):
        image_tasks.evaluate_files("vsr-zeroshot", baseline="random", text_model="m")
