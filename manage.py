#!/usr/bin/env python
"""Django's command-line utility for KernelGenBench Web."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgbweb.settings")
    from kgbweb.data_dir import restrict_umask

    restrict_umask()  # the database, broker messages and logs this command writes are its owner's only
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
