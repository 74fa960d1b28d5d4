"""Parsl's serialisation, with the interpreter's C pickle tried first for data.

Parsl serialises every argument, keyword dictionary and result with dill, whose pickler is written in
Python: about 8 µs for an empty tuple, a third of what the Falkon executor cost the submitting
process per python_app (docs/benchmarks.md, "Parsl's python_apps"). The C pickle does the same
objects in well under a microsecond.

What it produces is still Parsl's format, read by Parsl's own ``deserialize`` on either side: a
header line naming the serialiser, then its bytes. The header is Parsl's documented way to name a
serialiser by module and class (``parsl.serialize.concretes PickleSerializer``, loaded on first use),
so a payload made here is read by any Parsl worker, and a payload of Parsl's by us.

The C pickle is used only where it means the same as dill. It refuses what it cannot pickle (a
lambda, a local function, a generator), and dill is used then. What it can pickle only by name (a
function or a class) must be importable where the call runs; dill pickles such a thing by name too,
except what was defined in ``__main__``, which it sends whole because the worker's ``__main__`` is
not the submitting program's. So a pickle that names ``__main__`` anywhere (a string holding it
included, harmlessly) is made again with dill.
"""

import pickle

from parsl.serialize.facade import pack_buffers, serialize

PICKLE_HEADER = b"parsl.serialize.concretes PickleSerializer\n"
_MAIN = b"__main__"


def serialize_data(obj):
    """``obj`` as Parsl's ``serialize`` would make it readable: the C pickle where it stands in for
    dill (see the module's note), else Parsl's own serialisation."""
    try:
        body = pickle.dumps(obj)
    except Exception:
        return serialize(obj)
    if _MAIN in body:
        return serialize(obj)
    return PICKLE_HEADER + body


def pack_call(func, args, kwargs):
    """What Parsl's ``pack_apply_message`` makes of a call (its ``unpack_apply_message`` and
    ``execute_task`` read it), with ``args`` and ``kwargs`` through :func:`serialize_data`. The
    function itself goes through Parsl, which caches a function's serialised form."""
    return pack_buffers([serialize(func), serialize_data(args), serialize_data(kwargs)])
