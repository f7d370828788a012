"""The course package every Section 10 notebook imports.

Small modules, one concern each:

- `helpers.device`            choosing where tensors live
- `helpers.seeding`           making a run repeatable
- `helpers.data`              tiny synthetic data sets (nothing is downloaded)
- `helpers.checks`            checks whose failure says what was expected and what was got
- `helpers.selfcheck`         the student's self-check: every visible test, one line per exercise
- `helpers.widgets`           interactive explorers (broadcasting)
- `helpers.monitor`           training progress and loss-curve plots (notebook 02)
- `helpers.memory`            measuring where training memory goes (notebook 03)
- `helpers.checkpoints`       a CUDA-tagged checkpoint and safe-loading demos (notebook 04)
- `helpers.resume`            a tiny seeded training run to stop and resume (notebook 04)
- `helpers.ddp_demo`          real DistributedDataParallel on two processes (notebook 05)
- `helpers.parallel_picture`  the data- vs model-parallel picture (notebook 05)
"""

__version__ = "0.1.0"
