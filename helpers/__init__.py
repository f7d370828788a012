"""The course package every Section 10 notebook imports.

Small modules, one concern each:

- `helpers.device`            choosing where tensors live
- `helpers.seeding`           making a run repeatable
- `helpers.data`              seeded synthetic data sets and scikit-learn's real digits (nothing is downloaded)
- `helpers.loading`           a dataset slow to prepare, to measure parallel loading (notebook 01)
- `helpers.checks`            checks whose failure says what was expected and what was got
- `helpers.selfcheck`         the student's self-check: every visible test, one line per exercise
- `helpers.exercises`         test and demo cells: strict when graded; while a student works, Run All goes on
- `helpers.widgets`           interactive explorers (broadcasting), and a readable stored form for any widget
- `helpers.monitor`           the validation loss, training progress and loss-curve plots (notebook 02)
- `helpers.memory`            measuring where training memory goes (notebook 03)
- `helpers.checkpoints`       a CUDA-tagged checkpoint and safe-loading demos (notebook 04)
- `helpers.resume`            a tiny seeded training run to stop and resume (notebook 04)
- `helpers.ddp_demo`          real DistributedDataParallel on two processes (notebook 05)
- `helpers.process_group`     a notebook's function in every rank of a real gloo process group (notebook 05)
- `helpers.parallel_picture`  the data- vs model-parallel picture and the all-reduce (notebook 05)
- `helpers.broadcast_picture`, `helpers.checkpoint_pictures`, `helpers.debug_pictures`
                              figures that teach (notebooks 01, 04, 06)
- `helpers.live_errors`       shape, device and dtype errors provoked on the installed torch (notebook 06)

Test machinery the graded test cells use (never an answer to an exercise):

- `helpers.probes_devices`, `probes_training`, `probes_memory`, `probes_serialization`,
  `probes_parallel`, `probes_debugging`: models, losses and optimizers that record what was done to them
- `helpers.pretend_cuda`      a stand-in CUDA allocator that behaves like the real one (notebook 03)
- `helpers.records`           a probe's records, shared with its deep copies (a copy of the model may do the work)
"""

__version__ = "0.1.0"
