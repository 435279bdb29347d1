"""tony.pack_env: the active Python environment as an archive for [code]
python_venv, cached by content (cluster-pack's behaviour).

The archive is made by venv-pack (a virtualenv) or conda-pack (a conda env)
once per state of the environment and kept under the cache dir
($TONY_CACHE_DIR, default ~/.cache/tony/envs) as <env>-<digest>.tar.gz:
packing the same environment again returns the same file at once, and
tony-submit stages an archive once per content on YARN (<staging
root>/envs/<sha256>/), so an unchanged environment is neither packed nor
uploaded again.

The digest covers every file of the environment (path, size, modification
time) but bytecode caches, and pyvenv.cfg's text: installing, removing or
upgrading a package changes it."""

import glob
import hashlib
import os
import sys
import tempfile
from pathlib import Path

from .errors import TonyError

_SKIP_DIRS = {"__pycache__"}


def cache_dir():
    return Path(os.environ.get("TONY_CACHE_DIR", Path.home() / ".cache" / "tony" / "envs"))


def active_env():
    """The prefix of the active virtualenv or conda env, and its kind."""
    if os.environ.get("VIRTUAL_ENV"):
        return Path(os.environ["VIRTUAL_ENV"]), "venv"
    if sys.prefix != getattr(sys, "base_prefix", sys.prefix):
        return Path(sys.prefix), "venv"
    if os.environ.get("CONDA_PREFIX"):
        return Path(os.environ["CONDA_PREFIX"]), "conda"
    raise TonyError("no virtualenv or conda environment is active (VIRTUAL_ENV, "
                    "CONDA_PREFIX); activate one or pass pack_env(prefix)")


def env_digest(prefix):
    """A digest of the environment's state (see the module doc)."""
    h = hashlib.sha256()
    prefix = Path(prefix)
    for root, dirs, files in os.walk(prefix):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        for name in sorted(files):
            if name.endswith(".pyc"):
                continue
            path = Path(root) / name
            try:
                st = path.lstat()
            except OSError:
                continue
            rel = path.relative_to(prefix).as_posix()
            h.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    cfg = prefix / "pyvenv.cfg"
    if cfg.exists():
        h.update(cfg.read_bytes())
    return h.hexdigest()


def pack_env(prefix=None, output_dir=None, force=False):
    """Packs the environment at `prefix` (default: the active one) and
    returns the archive's path (a str usable as python_venv). Reuses the
    archive of an unchanged environment unless `force`."""
    if prefix is None:
        prefix, kind = active_env()
    else:
        prefix = Path(prefix).resolve()
        kind = "venv" if (prefix / "pyvenv.cfg").exists() else \
            "conda" if (prefix / "conda-meta").is_dir() else None
        if kind is None:
            raise TonyError(f"{prefix} is neither a virtualenv (no pyvenv.cfg) nor a "
                            "conda environment (no conda-meta)")
    out_dir = Path(output_dir) if output_dir else cache_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    archive = out_dir / f"{prefix.name}-{env_digest(prefix)[:20]}.tar.gz"
    if archive.exists() and not force:
        return str(archive)
    # Written under a temporary name and renamed: an archive in the cache is
    # always whole, also when two processes pack at once.
    fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=".packing-", suffix=".tar.gz")
    os.close(fd)
    os.unlink(tmp)
    try:
        (_pack_venv if kind == "venv" else _pack_conda)(prefix, tmp)
        os.replace(tmp, archive)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return str(archive)


def _tony_paths():
    """Where this tony package lives: an editable install of it points here."""
    here = Path(__file__).resolve().parent
    return {str(here), str(here.parent)}


def _editable_lines(prefix):
    """(pth file, line) of every .pth entry that points outside the env:
    what venv-pack calls editable packages."""
    found = []
    for pth in glob.glob(str(prefix / "lib" / "python*" / "site-packages" / "*.pth")):
        for line in Path(pth).read_text().splitlines():
            if not line or line.startswith("#") or line.startswith("import"):
                continue
            location = os.path.normpath(os.path.join(os.path.dirname(pth), line))
            if not location.startswith(str(prefix)):
                found.append((pth, location))
    return found


def _pack_venv(prefix, output):
    try:
        import venv_pack
        import venv_pack.core
    except ImportError:
        raise TonyError("pack_env needs venv-pack: pip install venv-pack") from None
    editable = _editable_lines(prefix)
    others = [loc for _, loc in editable if loc not in _tony_paths()]
    if others:
        raise TonyError(f"{prefix} has editable packages, whose code is outside the "
                        f"environment and would not be shipped: {', '.join(others)}; "
                        "install them without -e, or ship their code with files=")
    # An editable tony (scripts/setup-python.sh) is left out: tony.run ships
    # its own tony package with every job.
    check = venv_pack.core.check_no_editable_packages
    venv_pack.core.check_no_editable_packages = lambda context: None
    try:
        env = venv_pack.Env(str(prefix))
        for pth, _ in editable:
            env = env.exclude(os.path.relpath(pth, prefix))
        env.pack(output=output, format="tar.gz")
    except venv_pack.VenvPackException as e:
        raise TonyError(f"cannot pack {prefix}: {e}") from None
    finally:
        venv_pack.core.check_no_editable_packages = check


def _pack_conda(prefix, output):
    try:
        import conda_pack
    except ImportError:
        raise TonyError("packing a conda environment needs conda-pack: "
                        "pip install conda-pack (or conda install conda-pack)") from None
    conda_pack.pack(prefix=str(prefix), output=output, format="tar.gz")
