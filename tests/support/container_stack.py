"""The repository's Dockerfile and compose.yaml run with podman, with no registry to pull from.

The base image is made from Debian's packages (debootstrap, from the mirror apt is configured
with) and imported into podman; the image is built `FROM` it with the wheels of the pinned
dependencies mounted, then podman-compose starts the stack. Podman's state lives under one
cache folder (never the machine's own configuration), so a second run reuses the base, the
wheels and the build's layers:

    $FACTLEDGER_CONTAINER_CACHE, else $XDG_CACHE_HOME/factledger-container, else
    ~/.cache/factledger-container
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
SUITE = "bookworm"
BASE_REPOSITORY = "localhost/factledger-base"
# What the tests need on the machine; `.ci/run` installs them (Debian packages).
# iptables: netavark sets up the compose network through it, and Debian does not pull it in.
TOOLS = ("podman", "podman-compose", "debootstrap", "runc", "iptables")
# Bumped when the way the base is made changes, so that a cached one is not reused.
BASE_RECIPE = "minbase-1"
# podman's default open-files and processes limits (about a million) are above what this
# machine lets even root set, and some kernels refuse a container's processes limit at the
# hard limit itself: the containers get the process's own open-files limit and at most this.
MAX_PROCESSES = 32768
STALE_AFTER = "168h"


class ContainerToolError(RuntimeError):
    """A container tool failed; the message carries its command and output."""


def cache_dir() -> Path:
    configured = os.environ.get("FACTLEDGER_CONTAINER_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "factledger-container"


def missing_tools() -> list[str]:
    # iptables lives in sbin, which a user's PATH may leave out.
    sbin = (Path("/usr/sbin"), Path("/sbin"))
    return [
        tool
        for tool in TOOLS
        if shutil.which(tool) is None and not any((d / tool).exists() for d in sbin)
    ]


def debian_mirror(sources: Sequence[Path] = ()) -> str:
    """The Debian mirror apt is configured with for `SUITE` (its URL, read at run time)."""
    files = list(sources) or [
        Path("/etc/apt/sources.list"),
        *sorted(Path("/etc/apt/sources.list.d").glob("*")),
    ]
    for file in files:
        if not file.is_file():
            continue
        text = file.read_text()
        # One-line format: `deb [options] URL SUITE COMPONENTS...`
        for line in text.splitlines():
            words = re.sub(r"\[[^]]*\]", "", line.split("#", 1)[0]).split()
            if len(words) >= 3 and words[0] == "deb" and words[2] == SUITE:
                return words[1]
        # deb822 format: stanzas of `Field: value` lines.
        for stanza in re.split(r"\n\s*\n", text):
            pairs = (
                line.partition(":")
                for line in stanza.splitlines()
                if ":" in line and not line.lstrip().startswith("#")
            )
            fields = {key.strip().lower(): value.strip() for key, _, value in pairs}
            if (
                "deb" in fields.get("types", "").split()
                and SUITE in fields.get("suites", "").split()
            ):
                return fields["uris"].split()[0]
    raise ContainerToolError(f"no Debian {SUITE} source in {', '.join(map(str, files))}")


def requirements() -> str:
    """The image's pinned dependencies, as the Dockerfile's `requirements` stage reads them."""
    project = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())
    lines = (
        project["project"]["dependencies"]
        + project["project"]["optional-dependencies"]["embedded"]
        + project["build-system"]["requires"]
    )
    return "\n".join(lines) + "\n"


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def run(
    command: Sequence[str],
    env: Mapping[str, str],
    *,
    timeout: float,
    cwd: Path | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    try:
        done = subprocess.run(  # noqa: S603 - the container tools, with our own arguments
            list(command),
            env=dict(env),
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise ContainerToolError(f"{' '.join(command)}: no answer within {timeout:.0f} s") from exc
    if check and done.returncode != 0:
        raise ContainerToolError(
            f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-4000:]}"
            f"\n{done.stderr[-4000:]}"
        )
    return done


@dataclass(frozen=True)
class Podman:
    """podman with its configuration and storage under `root` (the cache folder)."""

    root: Path

    @classmethod
    def configured(cls, root: Path) -> Podman:
        conf = root / "conf"
        conf.mkdir(parents=True, exist_ok=True)
        # The run root holds state that must not outlive a reboot: a fixed folder of the
        # system's temporary directory, named after the cache so that two caches never share.
        run_root = Path(tempfile.gettempdir()) / f"factledger-container-{_digest(str(root))}"
        (conf / "storage.conf").write_text(
            "[storage]\n"
            'driver = "overlay"\n'
            f'graphroot = "{root / "storage"}"\n'
            f'runroot = "{run_root}"\n'
        )
        open_files = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        processes = resource.getrlimit(resource.RLIMIT_NPROC)[1]
        if open_files == resource.RLIM_INFINITY:
            open_files = 65536
        if processes == resource.RLIM_INFINITY or processes > MAX_PROCESSES:
            processes = MAX_PROCESSES
        (conf / "containers.conf").write_text(
            "[containers]\n"
            f'default_ulimits = ["nofile={open_files}:{open_files}", '
            f'"nproc={processes}:{processes}"]\n'
            "[engine]\n"
            # crun refuses hosts with cgroup v1 controllers mounted beside v2 (hybrid).
            'runtime = "runc"\n'
            'cgroup_manager = "cgroupfs"\n'
            'events_logger = "file"\n'
            "[network]\n"
            f'network_config_dir = "{root / "networks"}"\n'
        )
        return cls(root)

    @property
    def env(self) -> dict[str, str]:
        conf = self.root / "conf"
        return {
            **os.environ,
            "CONTAINERS_CONF": str(conf / "containers.conf"),
            "CONTAINERS_STORAGE_CONF": str(conf / "storage.conf"),
        }

    def __call__(
        self, *args: str, timeout: float = 120, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        return run(["podman", *args], self.env, timeout=timeout, check=check)

    def image_exists(self, name: str) -> bool:
        return self("image", "exists", name, check=False).returncode == 0


def base_image(podman: Podman) -> str:
    """A Debian `SUITE` minbase image made with debootstrap, imported once per recipe."""
    mirror = debian_mirror()
    key = _digest(SUITE, BASE_RECIPE, mirror)
    name = f"{BASE_REPOSITORY}:{SUITE}-{key}"
    if podman.image_exists(name):
        return name
    tarball = podman.root / "base" / f"{SUITE}-{key}.tar"
    if not tarball.exists():
        tarball.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=tarball.parent) as work:
            rootfs = Path(work) / "rootfs"
            run(
                ["debootstrap", "--variant=minbase", SUITE, str(rootfs), mirror],
                os.environ,
                timeout=900,
            )
            # What apt downloaded is not part of the system (as in Debian's slim images).
            for leftover in ("var/cache/apt/archives", "var/lib/apt/lists"):
                for item in (rootfs / leftover).glob("*"):
                    if item.is_file():
                        item.unlink()
            partial = Path(work) / "rootfs.tar"
            run(["tar", "-C", str(rootfs), "-cf", str(partial), "."], os.environ, timeout=300)
            partial.rename(tarball)
    podman("import", str(tarball), name, timeout=300)
    return name


def wheelhouse(root: Path) -> Path:
    """Wheels of the image's dependencies for this interpreter's platform, kept per set."""
    needed = requirements()
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    folder = root / "wheels" / f"{tag}-{_digest(needed)}"
    if folder.is_dir():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent) as work:
        listed = Path(work) / "requirements.txt"
        listed.write_text(needed)
        built = Path(work) / "wheels"
        run(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "-r", str(listed), "-w", str(built)],
            os.environ,
            timeout=900,
        )
        built.rename(folder)
    return folder


def build_image(podman: Podman, tag: str, base: str, wheels: Path) -> None:
    """The repository's Dockerfile, from `base`, with pip reading `wheels` alone."""
    # Each change of the sources leaves the wheel stage's layers behind, unnamed, beside the
    # unnamed stages the build reuses: those made over a week ago go, so the cache stays
    # bounded (a build that still needs one makes it again, once).
    podman("image", "prune", "--force", "--filter", f"until={STALE_AFTER}", timeout=300)
    podman(
        "build",
        "--pull=never",
        "--build-arg",
        f"BASE_IMAGE={base}",
        "--build-arg",
        "PIP_OPTIONS=--no-index --find-links /wheels",
        "--volume",
        f"{wheels}:/wheels:ro",
        "--tag",
        tag,
        "--file",
        str(REPOSITORY / "Dockerfile"),
        str(REPOSITORY),
        timeout=900,
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class Stack:
    """A compose project of the repository's compose.yaml, started by podman-compose."""

    podman: Podman
    project: str
    port: int
    env: Mapping[str, str]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def compose(self, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
        command = ["podman-compose", "-p", self.project, "-f", str(REPOSITORY / "compose.yaml")]
        return run([*command, *args], self.env, timeout=timeout, cwd=REPOSITORY)

    def containers(self) -> dict[str, str]:
        """Each service's container name."""
        label = f"label=io.podman.compose.project={self.project}"
        listed = self.podman("ps", "-a", "--format", "json", "--filter", label)
        return {
            c["Labels"]["com.docker.compose.service"]: c["Names"][0]
            for c in json.loads(listed.stdout or "[]")
        }

    def exec(self, service: str, *command: str, timeout: float = 120) -> str:
        name = self.containers()[service]
        return self.podman("exec", name, *command, timeout=timeout).stdout

    def logs(self) -> str:
        parts = []
        for service, name in sorted(self.containers().items()):
            out = self.podman("logs", "--tail", "40", name, check=False, timeout=30)
            parts.append(f"--- {service} ({name})\n{out.stdout[-3000:]}{out.stderr[-3000:]}")
        return "\n".join(parts)

    def tear_down(self) -> None:
        """Everything the project made goes, even after a failed start."""
        try:
            self.compose("down", "-v", timeout=180)
        finally:
            label = f"label=io.podman.compose.project={self.project}"
            left = self.podman("ps", "-aq", "--filter", label, check=False, timeout=60)
            for container in left.stdout.split():
                self.podman("rm", "-f", "-t", "5", container, check=False, timeout=60)
            volumes = self.podman("volume", "ls", "-q", "--filter", label, check=False)
            for volume in volumes.stdout.split():
                self.podman("volume", "rm", "-f", volume, check=False, timeout=60)
            self.podman("network", "rm", "-f", f"{self.project}_default", check=False)


@contextmanager
def compose_stack(podman: Podman, tag: str, project: str) -> Iterator[Stack]:
    """`podman-compose up -d` of the repository's compose.yaml with the image `tag`."""
    port = free_port()
    env = {
        **podman.env,
        "FACTLEDGER_IMAGE": tag,
        "FACTLEDGER_PORT": str(port),
        "POSTGRES_PASSWORD": f"pw-{_digest(project, 'owner')}",
        "POSTGRES_APP_PASSWORD": f"pw-{_digest(project, 'app')}",
    }
    stack = Stack(podman, project, port, env)
    try:
        stack.compose("up", "-d", timeout=300)
        yield stack
    finally:
        stack.tear_down()
