"""Task instances and few-shot prompts from corpus counts (SPEC §3)."""

from freqgap.instances.operands import CountsError
from freqgap.instances.run import build_instances_dir
from freqgap.instances.tasks import Grid, Task, load_tasks, resolve_grid

__all__ = ["CountsError", "build_instances_dir", "Grid", "Task", "load_tasks", "resolve_grid"]
