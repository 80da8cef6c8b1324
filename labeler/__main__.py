"""`python -m labeler`: the same CLI as the `labeler` command."""
from labeler.cli import main

main()
