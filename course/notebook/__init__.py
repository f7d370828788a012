"""The notebook vocabulary (cells and markers) and nbgrader itself, shared by authoring and grading."""
