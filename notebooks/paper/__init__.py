"""The notebooks' helper package: code that exists only to regenerate the paper's tables, beside the notebooks.

It is not part of the installed ``sova_lib`` (which never imports it): the
notebooks import it from their own folder, ``from paper import results``, as
JupyterLab (``make lab``) and ``sova reproduce`` run them, with the notebooks
folder (this package's parent) as the working folder. To run a notebook by hand, do the same:
``papermill --cwd notebooks ...`` (notebooks/README.md). The numbers come from
``sova_lib``; this package puts them in the paper's tables:

``results`` (the paper's numbers beside computed ones: Tables 4 and C.1,
Figure 2(b)), ``beside`` (a paper's numbers beside the computed ones, wide),
``error_analysis`` (Appendix E), ``table3`` (Table 3, the image tasks),
``contrastive`` (contrastive rows of Table 4 and Table C.1) and ``quickstart``
(the quickstart notebook's steps). ``data/`` holds the papers' reported
numbers, the settings Table 6's sentence encoders are loaded with, and the
quickstart's hand-written answer.
"""
