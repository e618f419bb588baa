"""The pinned requirements install on every supported platform and Python.

Each (platform, Python) case resolves `requirements-dev.txt` (which includes `requirements.txt`
and keras-hub) against PyPI for that machine, wheels only, without installing or downloading
anything: every pin must be chosen at its version, and exactly one TensorFlow package must come,
`tensorflow-cpu` or `tensorflow` as the markers say (keras-hub's tensorflow-text asks for
`tensorflow`: a second package would be a second TensorFlow).

The resolver is `uv pip compile --python-platform ... --python-version ... --only-binary :all:`.
pip's `pip install --dry-run --platform ... --python-version ...` cannot answer this: its
`--platform` chooses wheels but not environment markers, which it evaluates against the Python
running it (pypa/pip#11664), so from Linux it would ask for `tensorflow-cpu` on a Mac; and the
pip of Python 3.11's venv (23.2) downloads every wheel it considers (gigabytes of TensorFlow).
uv evaluates the markers, of our pins and of their own dependencies, for the target and reads
only the wheels' metadata.

The cases run in parallel threads (uv spends its time waiting on PyPI). They need PyPI
(`-m "not network"` deselects them); without it they are skipped locally and fail under CI
(`CI=true`). Nothing is written to the repository (uv keeps its usual cache in the user's).
"""

from __future__ import annotations

import importlib.util
import os
import ssl
import subprocess
import sys
import tempfile
import tomllib
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
INDEX = "https://pypi.org/simple"
PYTHONS = ("3.11", "3.12", "3.13")
THREADS = 12  # resolutions at once: uv mostly waits on PyPI
RESOLVE_SECONDS = 240  # most time one resolution may take
_UV_KEPT = {"UV_NATIVE_TLS", "UV_HTTP_TIMEOUT", "UV_CACHE_DIR", "UV_CONCURRENT_DOWNLOADS"}


@dataclass(frozen=True)
class Platform:
    """One kind of machine attnviz installs on."""

    name: str  # id in the test names
    triple: str  # uv's --python-platform
    markers: dict[str, str]  # PEP 508 marker values, except the Python version ones
    tensorflow: str  # the TensorFlow package the markers must choose there
    env: dict[str, str] = field(default_factory=dict)  # for uv: the oldest macOS supported


def _posix(system: str, sys_platform: str, machine: str) -> dict[str, str]:
    return {"os_name": "posix", "sys_platform": sys_platform, "platform_system": system,
            "platform_machine": machine}  # fmt: skip


def _windows(machine: str) -> dict[str, str]:
    return {"os_name": "nt", "sys_platform": "win32", "platform_system": "Windows",
            "platform_machine": machine}  # fmt: skip


MACOS_12 = {"MACOSX_DEPLOYMENT_TARGET": "12.0"}
PLATFORMS = (  # glibc 2.28 and macOS 12: the oldest systems docs/install.md promises
    Platform("linux-x86_64", "x86_64-manylinux_2_28", _posix("Linux", "linux", "x86_64"),
             "tensorflow"),
    Platform("linux-aarch64", "aarch64-manylinux_2_28", _posix("Linux", "linux", "aarch64"),
             "tensorflow"),
    Platform("macos-arm64", "aarch64-apple-darwin", _posix("Darwin", "darwin", "arm64"),
             "tensorflow", MACOS_12),
    Platform("windows-x86_64", "x86_64-pc-windows-msvc", _windows("AMD64"), "tensorflow-cpu"),
)  # fmt: skip
INTEL_MAC = Platform("macos-x86_64", "x86_64-apple-darwin", _posix("Darwin", "darwin", "x86_64"),
                     "tensorflow", MACOS_12)  # fmt: skip
CASES = [(p, v) for p in PLATFORMS for v in PYTHONS]


def environment(platform: Platform, python: str) -> dict[str, str]:
    """The full PEP 508 marker environment of CPython `python` on `platform`."""
    full = f"{python}.0"
    return {**platform.markers, "python_version": python, "python_full_version": full,
            "implementation_name": "cpython", "implementation_version": full,
            "platform_python_implementation": "CPython", "platform_release": "",
            "platform_version": ""}  # fmt: skip


def _uv_env(platform: Platform) -> dict[str, str]:
    """This environment, less uv settings that would add or change indexes (certificates and
    proxies are kept), plus the platform's own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("UV_") or k in _UV_KEPT}
    return {**env, **platform.env, "UV_NO_PROGRESS": "1", "UV_PYTHON_DOWNLOADS": "never"}


def resolve(platform: Platform, python: str, requirements: Path, *flags: str) -> dict[str, str]:
    """{canonical name: version} that installing `requirements` on `platform` with CPython
    `python` would choose, from wheels only.

    Raises:
        AssertionError: with uv's explanation, if the requirements do not resolve.
    """
    command = [sys.executable, "-m", "uv", "pip", "compile", "--no-config", "--quiet"]
    command += ["--python", sys.executable, "--no-python-downloads"]  # nothing is built
    command += ["--no-header", "--no-annotate", "--default-index", INDEX, "--only-binary", ":all:"]
    command += ["--python-platform", platform.triple, "--python-version", python]
    done = subprocess.run(
        [*command, *flags, str(requirements)],
        capture_output=True, text=True, env=_uv_env(platform), timeout=RESOLVE_SECONDS, cwd=ROOT,
    )  # fmt: skip
    if done.returncode:
        raise AssertionError(
            f"{requirements.name} does not resolve on {platform.name}, Python {python}:\n"
            f"{done.stderr.strip()[-3000:]}"
        )
    lines = [line.split(";")[0].strip() for line in done.stdout.splitlines()]
    pinned = [line.split("==") for line in lines if "==" in line and not line.startswith("#")]
    return {canonicalize_name(name): version for name, version in pinned}


def pins(path: Path) -> list[Requirement]:
    """The requirements of a requirements file, following its `-r` includes."""
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line.startswith("-r"):
            found += pins(path.parent / line[2:].strip())
        elif line:
            found.append(Requirement(line))
    return found


def _pypi_unreachable() -> str | None:
    """Why PyPI cannot be reached from here, or None."""
    try:
        with urllib.request.urlopen(f"{INDEX}/pip/", timeout=15) as response:
            response.read(1)
    except (urllib.error.URLError, OSError, ssl.SSLError) as error:
        return f"PyPI ({INDEX}) is unreachable: {error}"
    return None


@pytest.fixture(scope="module")
def pypi() -> None:
    """Skips the test without PyPI, except in CI (CI=true), where that is a failure; fails
    without uv (a dev requirement)."""
    if importlib.util.find_spec("uv") is None:
        pytest.fail("uv is not installed: pip install -r requirements-dev.txt", pytrace=False)
    reason = _pypi_unreachable()
    if reason is None:
        return
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{reason} (CI=true: the install tests must run)", pytrace=False)
    pytest.skip(f"{reason}; deselect with -m 'not network'")


@cache
def _all_resolutions() -> dict[tuple[str, str], dict[str, str] | AssertionError]:
    """Every (platform, Python) case's resolution (or its failure), run in parallel, once."""
    dev = ROOT / "requirements-dev.txt"

    def attempt(platform: Platform, python: str) -> dict[str, str] | AssertionError:
        try:
            return resolve(platform, python, dev)
        except AssertionError as error:
            return error

    with ThreadPoolExecutor(THREADS) as pool:
        futures = {(p.name, v): pool.submit(attempt, p, v) for p, v in CASES}
    return {case: future.result() for case, future in futures.items()}


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize(("platform", "python"), CASES, ids=[f"{p.name}-py{v}" for p, v in CASES])
def test_pinned_requirements_resolve(pypi: None, platform: Platform, python: str) -> None:
    versions = _all_resolutions()[(platform.name, python)]
    if isinstance(versions, AssertionError):
        raise versions
    target = environment(platform, python)
    for requirement in pins(ROOT / "requirements-dev.txt"):
        name = canonicalize_name(requirement.name)
        if requirement.marker is None or requirement.marker.evaluate(target):
            version = versions.get(name)
            assert version is not None and version in requirement.specifier, (name, version)
        else:
            assert name not in versions, f"{name} chosen on {platform.name}"
    other = {"tensorflow", "tensorflow-cpu"} - {platform.tensorflow}
    assert platform.tensorflow in versions and not other & set(versions), sorted(versions)


@pytest.mark.network
@pytest.mark.slow
def test_intel_macs_have_no_tensorflow_wheel(pypi: None) -> None:
    # Why docs/install.md leaves them out: TensorFlow stopped building them after 2.16.
    (tensorflow,) = [r for r in pins(ROOT / "requirements.txt") if r.name == "tensorflow"]
    with tempfile.TemporaryDirectory() as tmp:
        only = Path(tmp) / "tensorflow.txt"
        only.write_text(f"tensorflow{tensorflow.specifier}\n", encoding="utf-8")
        with pytest.raises(AssertionError, match="tensorflow.* has no wheels with a matching"):
            resolve(INTEL_MAC, "3.12", only, "--no-deps")


def _marker_grid() -> list[dict[str, str]]:
    posix = [_posix(system, sys_platform, machine)
             for system, sys_platform in (("Linux", "linux"), ("Darwin", "darwin"))
             for machine in ("x86_64", "aarch64", "arm64")]  # fmt: skip
    windows = [_windows(machine) for machine in ("AMD64", "ARM64", "x86")]
    return [environment(Platform("", "", m, ""), v) for m in posix + windows for v in PYTHONS]


@pytest.mark.parametrize("path", ["requirements.txt", "pyproject.toml"])
def test_exactly_one_tensorflow_package_applies_everywhere(path: str) -> None:
    if path == "pyproject.toml":
        project = tomllib.loads((ROOT / path).read_text(encoding="utf-8"))["project"]
        requirements = [Requirement(r) for r in project["dependencies"]]
    else:
        requirements = pins(ROOT / path)
    tensorflows = [r for r in requirements if r.name in ("tensorflow", "tensorflow-cpu")]
    for env in _marker_grid():
        applying = [r.name for r in tensorflows if r.marker.evaluate(env)]
        assert len(applying) == 1, (env["sys_platform"], env["platform_machine"], applying)


def test_pyproject_accepts_the_pins_with_the_same_markers() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = [Requirement(r) for r in project["dependencies"]]
    extras = project["optional-dependencies"]
    declared += [Requirement(r) for r in extras["hub"] + extras["dev"]]
    by_name = {canonicalize_name(r.name): r for r in declared}
    pinned = pins(ROOT / "requirements-dev.txt")
    assert set(by_name) == {canonicalize_name(r.name) for r in pinned}
    for pin in pinned:
        (version,) = [s.version for s in pin.specifier]
        wanted = by_name[canonicalize_name(pin.name)]
        assert version in wanted.specifier, (pin, wanted)
        assert str(wanted.marker) == str(pin.marker), (pin, wanted)
    pythons = SpecifierSet(project["requires-python"])
    assert [v for v in ("3.10", "3.11", "3.12", "3.13", "3.14") if v in pythons] == list(PYTHONS)
