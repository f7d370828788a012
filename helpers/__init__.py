"""The course package every Section 10 notebook imports.

Small modules, one concern each:

- `helpers.device`   choosing where tensors live
- `helpers.seeding`  making a run repeatable
- `helpers.data`     tiny synthetic data sets (nothing is downloaded)
- `helpers.checks`   checks whose failure says what was expected and what was got
- `helpers.widgets`  interactive explorers used in the notebooks
"""

__version__ = "0.1.0"
