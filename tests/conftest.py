import sys
from pathlib import Path

# The test support modules sit next to the tests.
sys.path.insert(0, str(Path(__file__).resolve().parent))
