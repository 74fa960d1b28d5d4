"""The one canonical form of object ids, output paths and input names (docs/data-diffusion.md, "Names").

The same rule as Java's ``io.falkon.protocol.ObjectId`` and C's ``names.c``; the three give the same answer
for every byte string of ``protocol/src/test/resources/names.txt`` (``tests/test_names.py``).

An object id is 1..1024 bytes of valid UTF-8, relative, of segments separated by single slashes, each
1..255 bytes and neither "." nor "..", with no control character (U+0000..U+001F, U+007F..U+009F). An output
path is the same but may be absolute and up to 4096 bytes. An input name is empty, one segment, or one segment
and a slash. Each function returns why its argument is refused, or None; each takes ``str`` or ``bytes``.
"""

MAX_ID_BYTES = 1024
MAX_PATH_BYTES = 4096
MAX_SEGMENT_BYTES = 255


def _text(value, what):
    if isinstance(value, (bytes, bytearray)):
        try:
            return value.decode("utf-8"), len(value), None
        except UnicodeDecodeError:
            return None, 0, f"{what} must be valid UTF-8"
    if not isinstance(value, str):
        return None, 0, f"{what} must be a string, got {type(value).__name__}"
    try:
        return value, len(value.encode("utf-8")), None
    except UnicodeEncodeError:  # a lone surrogate
        return None, 0, f"{what} must be valid UTF-8"


def _control(s):
    for i, c in enumerate(s):
        o = ord(c)
        if o < 0x20 or 0x7F <= o <= 0x9F:
            return i, o
    return None


def _segment_problem(seg, what, whole):
    if not seg:
        return f"{what} must not have an empty segment (a leading, trailing or doubled '/'), got {whole!r}"
    if seg in (".", ".."):
        return f"{what} must not have a '.' or '..' segment, got {whole!r}"
    if len(seg.encode("utf-8")) > MAX_SEGMENT_BYTES:
        return f"{what} must not have a segment over {MAX_SEGMENT_BYTES} bytes"
    return None


def _check(value, max_bytes, may_be_absolute, what):
    s, n, problem = _text(value, what)
    if problem:
        return problem
    if not s:
        return f"{what} must not be empty"
    bad = _control(s)
    if bad:
        return f"{what} must not hold control characters (NUL, newline, ...), found U+{bad[1]:04X} at character {bad[0]}"
    rest = s
    if s.startswith("/"):
        if not may_be_absolute:
            return f"{what} must be relative (no leading '/'), got {s!r}"
        rest = s[1:]
    for seg in rest.split("/"):
        problem = _segment_problem(seg, what, s)
        if problem:
            return problem
    if n > max_bytes:
        return f"{what} must be at most {max_bytes} bytes, got {n}"
    return None


def object_id_problem(value):
    """Why ``value`` is not an object id, or None."""
    return _check(value, MAX_ID_BYTES, False, "an object id")


def output_path_problem(value):
    """Why ``value`` cannot be where a task writes an output, or None."""
    return _check(value, MAX_PATH_BYTES, True, "an output path")


def input_name_problem(value):
    """Why ``value`` cannot be what an input is staged as in a sandbox, or None."""
    s, _, problem = _text(value, "an input's name")
    if problem:
        return problem
    if not s:
        return None
    plain = s[:-1] if s.endswith("/") else s
    if not plain or "/" in plain or plain in (".", ".."):
        return ("an input's name must be a plain file name, or a directory's name and a slash "
                "(\"diffs/\": the object goes into that directory)")
    return _check(plain, MAX_SEGMENT_BYTES, False, "an input's name")
