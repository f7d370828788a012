"""Tools beside the two systems: the demo class, the torch-compatibility run and the GPU check."""
