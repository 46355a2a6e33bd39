"""The exceptions of a failed audit, with the exit code `leakaudit audit` would give."""


class LeakauditError(Exception):
    """A failure of the library; exit_code is what `leakaudit audit` would exit with (3: internal)."""

    exit_code = 3


class InputError(LeakauditError, ValueError):
    """Bad input or options (exit code 2): the message names the input, its row and the field, as
    NAME:ROW: FIELD: what was expected (ROW counts the rows of that input from 1)."""

    exit_code = 2
