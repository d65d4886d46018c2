"""Stands in for rfc3987-syntax inside the Ray processes that the Ray tests and bench start.

jsonschema, which every Ray process imports, builds an Earley parser of the
RFC 3987 grammar at import time when rfc3987-syntax is installed (it comes
with Jupyter's ``jsonschema[format-nongpl]``): about 2.8 s of CPU in each of
Ray's processes, enough on a busy 2-core machine for Ray's agent to miss the
15 s its node manager waits for it. Ray never checks IRI formats, and
jsonschema treats this ImportError as the package being absent. Only the
processes started with this folder first on PYTHONPATH see it.
"""
raise ImportError("rfc3987_syntax is left out of the Ray processes the tests start")
