"""Makes `specs` (the lax spec table) importable by the tests beside it."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
