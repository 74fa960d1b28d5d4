#!/usr/bin/env python3
"""The C executor's layout, as docs/executor-c.md states it, checked (a CTest test):

1. No two units include each other, however indirectly (a unit is foo.c with its foo.h, and foo_state.h
   when it has one): the include graph between units is acyclic.
2. Each part of the executor's state is written by one file only (executor_state.h says which): the job
   queue (ex_queue) by slots.c, the connection (ex_session) by session.c, the pacing of reports
   (ex_reports) by reports.c, and the rest of the executor (struct ex) by executor.c. Others call the
   owner's functions.

Usage: check_layout.py SRC_DIR; exit 0 when both hold, 1 with each violation printed.
"""

import pathlib
import re
import sys

OWNERS = {"queue": "slots.c", "session": "session.c", "reports": "reports.c"}
TOP_LEVEL = ("terminated", "exit_status", "exit_why", "idle_since", "cache", "peer", "spool", "hostname", "cfg")
WRITE = r"(?:\[[^\]]*\])?\s*(?:=(?!=)|\+\+|--|\+=|-=|\|=|&=)"


def unit(name):
    """foo.c, foo.h and foo_state.h (a unit's internal state, beside its public header) are one unit."""
    base = name.rsplit(".", 1)[0]
    return base[:-len("_state")] if base.endswith("_state") else base


def include_cycles(src):
    graph = {}
    for f in sorted(src.glob("*.[ch]")):
        deps = graph.setdefault(unit(f.name), set())
        for m in re.finditer(r'^#include "([a-z_0-9]+)\.h"', f.read_text(), re.M):
            if m.group(1) != unit(f.name):
                deps.add(m.group(1))
    problems, state = [], {}

    def visit(u, path):
        state[u] = "open"
        for d in sorted(graph.get(u, ())):
            if state.get(d) == "open":
                problems.append("include circle: " + " -> ".join(path[path.index(d):] + [d]))
            elif d not in state:
                visit(d, path + [d])
        state[u] = "done"

    for u in sorted(graph):
        if u not in state:
            visit(u, [u])
    return problems


def foreign_writes(src):
    problems = []
    for f in sorted(src.glob("*.c")):
        for no, line in enumerate(f.read_text().splitlines(), 1):
            code = line.split("//")[0]
            for m in re.finditer(r"(?:->|\.)(queue|session|reports)\.([a-z_]+)" + WRITE, code):
                if OWNERS[m.group(1)] != f.name:
                    problems.append(f"{f.name}:{no}: writes ex_{m.group(1)}.{m.group(2)}, which is {OWNERS[m.group(1)]}'s")
            for m in re.finditer(r"\be->(" + "|".join(TOP_LEVEL) + r")\b" + WRITE, code):
                if f.name != "executor.c":
                    problems.append(f"{f.name}:{no}: writes ex.{m.group(1)}, which is executor.c's")
    return problems


def main():
    src = pathlib.Path(sys.argv[1])
    problems = include_cycles(src) + foreign_writes(src)
    for p in problems:
        print(p)
    units = len({unit(f.name) for f in src.glob("*.[ch]")})
    print(f"{units} units: {'no include circle, each part written by its owner' if not problems else 'see above'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
