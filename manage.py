#!/usr/bin/env python
import sys


def main() -> None:
    from config.startup import require_settings_module

    require_settings_module()  # never the development settings by default
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
