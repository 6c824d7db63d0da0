"""The ``rmqcompat`` command line: click commands that parse options and delegate."""
