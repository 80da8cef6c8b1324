"""`python -m labeler`: the same CLI as the `labeler` command."""
from labeler_edge.cli import main

main()
