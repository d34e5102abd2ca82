"""``kgb``: the command-line client of KernelGenBench Web. Talks HTTP (requests) only: no Django in here."""
