"""The notebooks' helper package: code that exists only to regenerate the paper's tables, beside the notebooks.

It is not part of the installed ``sova_lib`` (which never imports it): the
notebooks import it from their own folder, ``from paper import results``, as
JupyterLab (``make lab``) and ``sova reproduce`` run them, with the notebooks
folder (this package's parent) as the working folder. To run a notebook by hand, do the same:
``papermill --cwd notebooks ...`` (notebooks/README.md). The numbers come from
``sova_lib``; this package puts them in the paper's tables:

``results`` (the paper's numbers of the SOVABench paper, ``paper_results``, and the computed rows beside them:
Tables 4 and C.1; a description cache scored on every protocol, ``evaluate_cache``), ``beside`` (a paper's
numbers beside the computed ones, as one wide table: the MUVR tables) and ``error_analysis`` (the synthetic
demonstration's texts of Appendix E). Everything else a notebook computes is in its own cells. ``data/`` holds the
papers' reported numbers, Table 6's encoder settings and the quickstart's hand-written answer.
"""
