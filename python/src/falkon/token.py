"""Where a client finds the deployment's token: the same order as every Falkon command (docs/security.md)."""

import os
import pathlib

ENV = "FALKON_TOKEN"
ENV_FILE = "FALKON_TOKEN_FILE"
ENV_HOME = "FALKON_HOME"


def falkon_home(environ=None):
    """``$FALKON_HOME``, else ``$HOME/.falkon`` (the password database's home when ``HOME`` is unset),
    the rule of every Falkon component (docs/security.md)."""
    environ = os.environ if environ is None else environ
    h = environ.get(ENV_HOME)
    if h:
        return pathlib.Path(h)
    home = environ.get("HOME")
    if not home:
        import pwd
        home = pwd.getpwuid(os.getuid()).pw_dir
    return pathlib.Path(home) / ".falkon"


def read_token_file(path):
    """The first line of a token file, stripped; a clear error when it is unreadable or empty."""
    try:
        text = pathlib.Path(path).read_text(encoding="ascii").strip()
    except OSError as e:
        raise ValueError(f"cannot read the token file {path}: {e.strerror or e}") from e
    value = text.split("\n", 1)[0].strip()
    if not value:
        raise ValueError(f"the token file {path} is empty")
    return value


def find_token(token=None, token_file=None, environ=None):
    """The token to present: ``token``, ``token_file``, ``$FALKON_TOKEN``, ``$FALKON_TOKEN_FILE``,
    then ``$FALKON_HOME/token`` (``~/.falkon/token``); ``""`` when there is none anywhere."""
    environ = os.environ if environ is None else environ
    if token:
        return token
    if token_file:
        return read_token_file(token_file)
    if environ.get(ENV, "").strip():
        return environ[ENV].strip()
    if environ.get(ENV_FILE):
        return read_token_file(environ[ENV_FILE])
    default = falkon_home(environ) / "token"
    if os.access(default, os.R_OK):
        return read_token_file(default)
    return ""
