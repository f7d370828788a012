"""The class report: what the class got wrong, from the gradebook, as one self-contained HTML page."""
