"""The crop path (sova_lib.crop): a track's union box, the clamp to a frame, the crop of a frame; exact values."""
import numpy as np
import pytest

from sova_lib.crop import clamp, crop, union_box


def test_union_box_is_min_corner_and_max_corner_rounded_outwards():
    boxes = [[10.2, 20.0, 50.3, 60.5], [5.9, 30.0, 40.1, 70.0], [12.0, 18.7, 49.0, 55.0]]
    assert union_box(boxes) == (5, 18, 51, 70)  # floor(5.9), floor(18.7), ceil(50.3), ceil(70.0)
    assert union_box([[-3.5, 1, 2000.2, 1080]]) == (-4, 1, 2001, 1080)  # as annotated: no clamp, no padding
    assert union_box(np.array([3, 4, 5, 6])) == (3, 4, 5, 6)  # one box
    # the union of unions is the union: boxes summed in pieces give the same region
    assert union_box([union_box(boxes[:1]), union_box(boxes[1:])]) == union_box(boxes)
    with pytest.raises(ValueError, match="no box"):
        union_box(np.zeros((0, 4)))


def test_clamp_cuts_the_region_to_the_frame():
    assert clamp((-4, 30, 2000, 90), 1920, 1080) == (0, 30, 1920, 90)
    assert clamp((10, 20, 30, 40), 100, 100) == (10, 20, 30, 40)
    assert clamp((10.4, 19.6, 29.5, 40.5), 100, 100) == (10, 20, 30, 40)  # whole pixels, half to even
    assert clamp((90, 90, 150, 150), 100, 100) == (90, 90, 100, 100)
    with pytest.raises(ValueError, match=r"\(200, 0, 300, 10\) is empty inside the 96x64 frame"):
        clamp((200, 0, 300, 10), 96, 64)
    with pytest.raises(ValueError, match="is empty"):
        clamp((10, 10, 10, 20), 96, 64)  # no width


def test_crop_takes_the_pixels_inside_the_clamped_region():
    frame = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)  # 5 wide, 4 high
    piece = crop(frame, (1, 2, 3, 4))
    assert piece.shape == (2, 2, 3) and piece.flags["C_CONTIGUOUS"]
    assert piece[:, :, 0].tolist() == [[33, 36], [48, 51]]  # rows 2-3, columns 1-2, channel 0
    assert crop(frame, (-10, -10, 100, 100)).tolist() == frame.tolist()
