"""The notebooks' helper package: code that exists only to regenerate the paper's tables, beside the notebooks.

It is not part of the installed ``sova_lib`` (which never imports it): the
notebooks import it from their own folder, ``from paper import results``, as
JupyterLab (``make lab``) and ``sova reproduce`` run them, with the notebooks
folder (this package's parent) as the working folder. To run a notebook by hand, do the same:
``papermill --cwd notebooks ...`` (notebooks/README.md). The numbers come from
``sova_lib``; this package puts them in the paper's tables:

``results`` (the paper's numbers beside computed ones: Tables 4 and C.1), ``beside`` (a paper's numbers beside the computed ones, wide),
``ablations`` (Tables 5-7), ``benchmark_stats`` (Table 2, Figure 3),
``error_analysis`` (Appendix E's synthetic demonstration), ``table3`` (Table 3, the image tasks),
``muvr_tables`` (the MUVR paper's Tables 7-9). ``data/`` holds the papers' reported numbers and the quickstart's
hand-written answer.
"""
