"""Where and how wide a Ray run goes (``RayOptions``), declared apart from the Ray engines, which import Ray.

``RayOptions`` is what ``sova_lib.describe.ray_engine.describe_items_ray`` and
``sova_lib.describe.contrastive.ray_engine.embed_items_ray`` take, and what the
command line's ray engine options (``sova_lib.cli.engine``) are made from;
``use_cluster_token`` (and ``cluster_token``, where it looks) turns on Ray's
token authentication for a run that joins a cluster, before Ray is imported.
This module imports no Ray.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from sova_lib.describe.contract import option

__all__ = ["RayOptions", "cluster_token", "use_cluster_token"]


@dataclass(frozen=True)
class RayOptions:
    """Where and how wide a Ray run goes; the same for describing and embedding (``RunOptions``: how it behaves).

    ``workers`` actors, each with ``gpus_per_worker`` GPUs and
    ``cpus_per_worker`` CPUs, take ``items_per_call`` items per call (the describer batches them by its own
    ``batch_size``);
    ``load_workers`` decoding threads per actor (default: its CPUs, 1 to 8; ``threads``).
    ``address``, ``num_cpus`` and ``num_gpus``: see ``ray_session``.
    Every Ray run function takes these as one ``ray`` argument (default: these defaults).

    Each field is declared once (``contract.option``): its default, its help and, for one the command line offers
    as a flag, that flag's metavar; ``sova_lib.cli.engine`` makes the flags from it (a help's ``{default:g}`` is
    the default).
    """

    workers: int = option(1, help="Ray actors in the pool, each loading the model once (default {default:g})",
                          flag="N")
    gpus_per_worker: float = option(0.0, help="GPUs each actor holds (default {default:g})", flag="N")
    cpus_per_worker: float = option(1.0, help="CPUs each actor holds (default {default:g})", flag="N")
    items_per_call: int = option(8, help="items per actor call (default {default:g}), which the actor's describer "
                                         "batches by --batch-size", flag="N")
    address: str | None = option(None, help="join this Ray cluster ('auto': the one started on this machine); "
                                            "default: start a local Ray instance", flag="ADDRESS")
    num_cpus: int | None = option(None, help="CPUs of a local Ray instance (default: all)", flag="N")
    num_gpus: int | None = option(None, help="GPUs of a local Ray instance (default: all)", flag="N")
    load_workers: int | None = option(None, help="decoding threads per actor (default: its CPUs, 1 to 8)")

    def __post_init__(self):
        if self.workers < 1 or self.items_per_call < 1:
            raise ValueError(f"workers and items_per_call must be at least 1, got {self.workers} and "
                             f"{self.items_per_call}")
        if self.address is not None:
            use_cluster_token()  # now, before Ray is imported: it reads RAY_AUTH_MODE then

    def engine(self) -> dict:
        """The manifest's ``engine`` entry."""
        return {"name": "ray", "workers": self.workers, "gpus_per_worker": self.gpus_per_worker,
                "cpus_per_worker": self.cpus_per_worker, "items_per_call": self.items_per_call}

    def device(self) -> str:
        return f"ray: {self.workers} x ({self.gpus_per_worker:g} GPU, {self.cpus_per_worker:g} CPU)"

    def threads(self) -> int:
        """Decoding threads per actor, the one rule of the describe and the embedding Ray engines.

        ``load_workers`` when given; otherwise the actor's CPUs (``cpus_per_worker``, rounded down, at least 1),
        at most 8. The machine that plans the run may not be the one an actor runs on, so its own core count
        plays no part: Ray places an actor only on a node with ``cpus_per_worker`` CPUs free.
        """
        if self.load_workers is not None:
            return self.load_workers
        return max(1, min(8, int(self.cpus_per_worker) or 1))



def cluster_token() -> str | None:
    """Where Ray would read a cluster's token from: ``$RAY_AUTH_TOKEN``, ``$RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token``."""
    if os.environ.get("RAY_AUTH_TOKEN"):
        return "$RAY_AUTH_TOKEN"
    for path in (os.environ.get("RAY_AUTH_TOKEN_PATH"), Path.home() / ".ray" / "auth_token"):
        if path and Path(path).is_file():
            return str(path)
    return None


def use_cluster_token() -> None:
    """Joining a cluster (``address``): with ``RAY_AUTH_MODE`` unset and a token at hand, use token authentication.

    ``ray start --head`` of Ray 2.60 turns token authentication on whenever a token exists, and a driver that
    joins without ``RAY_AUTH_MODE=token`` is refused (``InvalidAuthToken``). Ray reads the token itself from the
    places ``cluster_token`` names; this sets ``RAY_AUTH_MODE=token`` for this process (and the actors it starts)
    when one of them holds one. ``RAY_AUTH_MODE`` set by the user is left as it is.
    """
    if "RAY_AUTH_MODE" in os.environ:
        return
    where = cluster_token()
    if where is not None:
        os.environ["RAY_AUTH_MODE"] = "token"
        print(f"sova: note: joining the Ray cluster with token authentication (the token of {where}; "
              "RAY_AUTH_MODE=disabled turns it off)", file=sys.stderr)
