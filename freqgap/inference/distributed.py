"""`freqgap predict` under a launcher (`torchrun`, `accelerate launch`): a shard per rank.

A user with N GPUs starts one command; each rank reads RANK / WORLD_SIZE / LOCAL_RANK,
predicts shard RANK/WORLD_SIZE (freqgap.inference.shards) on cuda:LOCAL_RANK (or the CPU),
and rank 0 merges after every rank has finished, through the same merge and refusals as
`--merge N`. The ranks agree after each step (a gather of each rank's error, if any), so
one failed rank fails every rank before anything is merged, and rank 0 reports it in one
line. The group carries only these small messages, never tensors, so it is gloo on CPU
and GPU alike: no NCCL set-up, and no device pinning for the coordination itself.
"""

from __future__ import annotations

import os
import sys
import traceback
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from freqgap.errors import FreqgapError, InputMismatchError, UsageError
from freqgap.inference.predict import Prompts, predict
from freqgap.inference.shards import merge_shards
from freqgap.inference.writer import PredictionsError
from freqgap.manifest import MANIFEST_NAME

ENV = ("RANK", "WORLD_SIZE", "LOCAL_RANK")
# Ranks wait for the slowest one between steps; a shard can take hours on a big model,
# so the group's timeout is long (a rank that dies is caught by the launcher, not by it).
WAIT = timedelta(hours=48)


@dataclass(frozen=True)
class Launch:
    """This process's place in a launched group."""

    rank: int
    world_size: int
    local_rank: int

    @property
    def shard(self) -> tuple[int, int]:
        return self.rank, self.world_size


def launch_from_env(environ: Mapping[str, str] | None = None) -> Launch | None:
    """The launch this process belongs to, from the launcher's variables; None when none
    was set, or a group of one (then the run is an ordinary single-process one)."""
    env = os.environ if environ is None else environ
    if not any(name in env for name in ENV):
        return None
    values = {}
    for name in ENV:
        text = env.get(name, "0" if name == "LOCAL_RANK" else None)
        if text is None or not text.strip().isdigit():
            raise UsageError(f"{name}={text!r} in the environment: a launcher (torchrun) sets "
                             f"{', '.join(ENV)} to whole numbers; unset them to run one process")
        values[name] = int(text)
    launch = Launch(values["RANK"], values["WORLD_SIZE"], values["LOCAL_RANK"])
    if not 0 <= launch.rank < launch.world_size:
        raise UsageError(f"RANK={launch.rank} with WORLD_SIZE={launch.world_size} in the "
                         "environment: expected 0 <= RANK < WORLD_SIZE")
    return launch if launch.world_size > 1 else None


def refuse_options(launch: Launch, argv: Sequence[str] = (), **given: Any) -> None:
    """Options that pick the shard or the revisions themselves contradict the launcher; a
    bucket path would be fetched and published by every rank into one local copy."""
    from freqgap.counting.objectstore import is_object_store

    for word in argv:
        value = word.split("=", 1)[-1] if word.startswith("--") else word
        if is_object_store(value):
            raise UsageError(f"{value} under a launcher (WORLD_SIZE={launch.world_size} in the "
                             "environment): every rank would fetch and publish its own copy; "
                             "give local paths that every rank sees, and copy the result to "
                             "the bucket after")
    for flag, value in given.items():
        if value is not None:
            shown = ("/" if isinstance(value, tuple) else ",").join(map(str, value)) \
                if isinstance(value, (tuple, list)) else value
            raise UsageError(f"--{flag.replace('_', '-')} {shown} under a launcher (WORLD_SIZE="
                             f"{launch.world_size} in the environment): each rank takes shard "
                             "RANK/WORLD_SIZE and rank 0 merges; "
                             + ("launch once per revision with --revision R"
                                if flag == "revisions" else "drop the option, or run without "
                                "torchrun"))


def rank_device(requested: str | None, launch: Launch) -> str:
    """cuda:LOCAL_RANK when CUDA is requested or available, else what was asked (cpu)."""
    import torch

    if requested not in (None, "cuda"):
        if requested.startswith("cuda:"):
            raise UsageError(f"--device {requested} under a launcher: each rank uses "
                             "cuda:LOCAL_RANK; give --device cuda, or leave it out")
        return requested
    if not torch.cuda.is_available():
        return "cpu"
    count = torch.cuda.device_count()
    if launch.local_rank >= count:
        raise UsageError(f"LOCAL_RANK={launch.local_rank}: only {count} CUDA device(s) are "
                         f"visible on this node; start at most {count} processes per node")
    return f"cuda:{launch.local_rank}"


def predict_launched(launch: Launch, prompts_path: str | Path, model_dir: str | Path,
                     model: str, *, device: str | None = None, force: bool = False,
                     **options: Any) -> dict[str, Any] | None:
    """Predict this rank's shard, then (rank 0) merge; the merged manifest on rank 0, None
    on the others. A finished directory is handled by rank 0 alone, as a single-process
    rerun would be (returned, or refused for other settings); with `force` and other
    settings its manifest is removed first, so the merge replaces its rows."""
    import torch.distributed as dist

    unset = [name for name in ("MASTER_ADDR", "MASTER_PORT") if not os.environ.get(name)]
    if unset:
        raise UsageError(f"RANK and WORLD_SIZE are set but {' and '.join(unset)} not: start the "
                         "ranks with a launcher (torchrun --nproc_per_node N -m freqgap "
                         "predict …), or unset RANK and WORLD_SIZE to run one process")
    dist.init_process_group("gloo", rank=launch.rank, world_size=launch.world_size,
                            timeout=WAIT)
    model_dir = Path(model_dir)
    done = _agree(launch, lambda: _finished(model_dir, prompts_path, model, device, force,
                                            options) if launch.rank == 0 else None)
    run = [done is None]
    dist.broadcast_object_list(run, src=0)          # rank 0's answer, to every rank
    if run[0]:
        _agree(launch, lambda: _predict_shard(launch, prompts_path, model_dir, model,
                                              device, force, options))
        done = _agree(launch, lambda: merge_shards(model_dir, prompts_path)
                      if launch.rank == 0 else None)
    # Closed on success only: after a failure rank 0 keeps the group open until it has
    # printed its line and exits, as closing it ends the other ranks (_wait_for_rank_0).
    # The barrier first: no rank tears its end down while another is still in the last
    # collective (a torn pair can abort the other process at exit).
    dist.barrier()
    dist.destroy_process_group()
    return done if launch.rank == 0 else None


def exit_launched(code: int) -> None:
    """End a launched rank without the interpreter's teardown: the process group's C++
    threads can abort it ("terminate called without an active exception"), which the
    launcher reports as a failed run after every result was written."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _predict_shard(launch: Launch, prompts: str | Path, model_dir: Path, model: str,
                   device: str | None, force: bool, options: dict[str, Any]) -> dict[str, Any]:
    """This rank's shard on its own device (made the current one, so that nothing lands on
    cuda:0 by default)."""
    device = rank_device(device, launch)
    if device.startswith("cuda:"):
        import torch

        torch.cuda.set_device(device)
    return predict(prompts, model_dir, model, device=device, force=force, shard=launch.shard,
                   **options)


def _finished(model_dir: Path, prompts: str | Path | Prompts, model: str, device: str | None,
              force: bool, options: dict[str, Any]) -> dict[str, Any] | None:
    """Rank 0: the manifest of a finished directory with these settings; None when the
    shards are to run (nothing finished there, or --force over other settings)."""
    if not (model_dir / MANIFEST_NAME).exists():
        return None
    try:
        return predict(prompts, model_dir, model, device=device, **options)
    except InputMismatchError:
        if not force:
            raise
    (model_dir / MANIFEST_NAME).unlink()      # nothing there looks finished any more
    return None


def _agree(launch: Launch, step: Callable[[], Any]) -> Any:
    """Run `step` on this rank, then learn every rank's outcome: the step's result when all
    succeeded. Otherwise rank 0 raises one line naming the failed ranks (its own bug keeps
    its traceback) and the other ranks exit without a line of their own."""
    import torch.distributed as dist

    result, problem, bug = None, None, None
    try:
        result = step()
    except FreqgapError as exc:
        problem, bug = str(exc), exc
    except Exception as exc:            # a bug: its traceback is printed by its own rank
        problem, bug = f"{type(exc).__name__}: {exc} (its traceback is above)", exc
        if launch.rank != 0:
            traceback.print_exc()
    problems: list[str | None] = [None] * launch.world_size
    dist.all_gather_object(problems, problem)
    failed = [(r, p) for r, p in enumerate(problems) if p is not None]
    if not failed:
        return result
    if launch.rank != 0:
        _wait_for_rank_0()
        raise SystemExit(1 if bug is not None and not isinstance(bug, FreqgapError) else 2)
    if bug is not None and len(failed) == 1:
        raise bug                        # rank 0's own error, exactly as a single process
    if bug is not None and not isinstance(bug, FreqgapError):
        traceback.print_exception(bug)
    first, text = failed[0]
    others = f" (and {len(failed) - 1} other rank(s))" if len(failed) > 1 else ""
    raise PredictionsError(f"rank {first} of {launch.world_size} failed: {text}{others}; "
                           "nothing was merged (rerun the same command: finished shards "
                           "are kept)")


def _wait_for_rank_0() -> None:
    """Let rank 0 print its line before this rank exits (a launcher stops the group at the
    first exit): rank 0 never joins this barrier, which ends when rank 0's process exits
    (its end of the group closes) or when the launcher stops this rank."""
    import torch.distributed as dist

    sys.stderr.flush()
    try:
        dist.barrier()
    except Exception:
        pass
