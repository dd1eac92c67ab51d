"""Count a training order by step bucket: a model trained here (its data_order/, edges = its
checkpoints) or any indexed dataset with a tokenizer (Pythia's pre-shuffled document.bin)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from freqgap.counting.job import CountOptions
from freqgap.counting.ordered_job import OrderedCountJob, OrderOptions
from freqgap.counting.rules import TermRules


def count_model_order(model_dir: str | Path, output: str | Path, spark=None,
                      rules: TermRules | None = None, edges: list[int] | None = None,
                      verbose: bool = False, **options: Any) -> dict[str, Any]:
    """Counts of everything the model in `model_dir` trained on, by checkpoint bucket
    (data_order/order.json gives sequences per step, the EOD token and the checkpoints);
    verbose shows Spark's INFO logs when the session is started here."""
    from freqgap.spark_session import get_spark
    from freqgap.training.order import read_order

    info = read_order(model_dir)
    order = OrderOptions(tokenizer=info["tokenizer_path"], edges=edges or info["checkpoints"],
                         seqs_per_step=int(info["seqs_per_step"]), eod_token=info["eod_token"],
                         extra={"order_of": str(Path(model_dir))})
    opts = CountOptions(inputs=[info["prefix_path"]], output=str(output),
                        rules=rules or TermRules.from_conf(), **options)
    return OrderedCountJob(spark or get_spark(verbose=verbose), opts, order).run()
