"""Judge the holes of a saved run: the core's `labeler.holes` (the CLI's `labeler judge --holes-from`
finds them the same way), under the name the pages have used."""
from labeler.holes import HOLE_DEPTH, Holes, find_holes

__all__ = ["HOLE_DEPTH", "Holes", "find_holes"]
