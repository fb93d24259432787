"""The `linkemu` command line: main.py builds the parser from one module
per command group (each with a register(sub) function)."""
