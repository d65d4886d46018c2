"""From raw MEVA/VIRAT annotations to the SOVABench clips.

``sources`` lists the source videos a protocol needs (where each is published,
what is on disk), ``fetch`` downloads the MEVA ones from the public bucket
(``transfer``: one file's bounded, validated transfer; ``checksums``: the
root's ``SHA256SUMS``),
``kpf`` reads KPF annotation files (streaming), ``kpf_index`` keeps a small
per-video index of them, ``plan`` turns benchmark rows into a clip manifest
(window, crop, reversal, status), ``extract`` cuts the clips from the source
videos (``frame_size``: whether a video is the one its annotations were drawn
on), ``stats`` summarises a manifest, and ``items`` makes describer items
of a protocol's clip files or of a manifest's rows.
"""
