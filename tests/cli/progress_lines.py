"""Checks the `[HH:MM:SS] step ...` / `step: done in N s` lines of a command."""

import re

# One progress line, "[HH:MM:SS] ...": commands that write their results to
# stdout (predict) show these on stderr; nothing else may go there.
PROGRESS_LINE = re.compile(r"\[\d\d:\d\d:\d\d\] .*")


def assert_steps_shown(out, steps):
    """Each step is announced, then timed, in order: `[HH:MM:SS] step ...`."""
    position = 0
    for step in steps:
        start = re.compile(rf"^\[\d\d:\d\d:\d\d\] ({re.escape(step)}.*) \.\.\.$", re.M).search(out, position)
        assert start, f"{step!r} not announced in:\n{out}"
        done = re.compile(rf"^\[\d\d:\d\d:\d\d\] {re.escape(start.group(1))}: done in \d+\.\d s$", re.M)
        finished = done.search(out, start.end())
        assert finished, f"{step!r} not timed in:\n{out}"
        position = finished.end()
