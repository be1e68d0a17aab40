"""SimGrid platforms for simulated zbfs runs (docs/simulation.md): a cluster of N hosts as a
two- or three-level fat tree with a chosen oversubscription, a 3D torus, a Tofu-like 6D
torus, or a dragonfly, with links of a preset that matches `zbfs run --network` (1gbe,
10gbe, ib-qdr, ib-hdr, tofu-d). Written as SimGrid's own <cluster> topologies
(FAT_TREE, TORUS, DRAGONFLY), so that SimGrid routes them.

A preset's latency and bandwidth are zbfs's end-to-end figures for a pair of nodes
(src/zbfs/network/network_model.cpp): every link has the preset's bandwidth, and its
latency is spread over the links between far hosts (LINKS_ACROSS). Ranks on one host talk
through its loopback at
zbfs's shared-memory figures (0.5 us, 10 GB/s). Hosts compute at 1 Gflop/s, and
`zbfs-lab simulate` tells SMPI that the machine running the simulation does too, so that a
simulated rank's computation takes the time it takes here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

HOST_SPEED_FLOPS = 1e9

# zbfs's inter-node figures (network_model.cpp) and a Tofu-D class (Fujitsu: 6.8 GB/s per
# link, about 0.5 us a hop; about 1 us between nodes).
LINK_PRESETS: dict[str, tuple[float, float]] = {
    "1gbe": (50.0e-6, 117.5e6),
    "10gbe": (12.0e-6, 1.175e9),
    "ib-qdr": (1.3e-6, 3.4e9),
    "ib-hdr": (1.0e-6, 24.0e9),
    "tofu-d": (1.0e-6, 6.8e9),
}
SHARED_MEMORY = (0.5e-6, 10.0e9)
# A preset's latency is spread over the links a message crosses between hosts under
# different top switches (fat trees, dragonflies), or between torus neighbours (a hop's
# two ends), so that those pairs see the preset's figure; nearer pairs see less, farther
# torus pairs more, as on the real networks.
LINKS_ACROSS = {"fattree": 4, "fattree3": 6, "torus": 2, "tofu": 2, "dragonfly": 6}
TOPOLOGIES = ("fattree", "fattree3", "torus", "tofu", "dragonfly")


class PlatformError(Exception):
    """A platform that cannot be built; the message says why."""


@dataclass(frozen=True)
class Platform:
    topology: str
    hosts: int
    preset: str
    oversubscription: float
    parameters: str  # SimGrid's topo_parameters
    # The preset's end-to-end figures, or those the user gave instead (for example the
    # figures zbfs measured on the links being compared with).
    latency_s: float = 0.0
    bandwidth_bytes_per_s: float = 0.0
    # Cores a host computes with: one for each rank placed on it, as on a real node. With
    # one core, SimGrid runs a host's ranks' computations one after another (4 ranks a
    # host made every rank's work take 4 times as long).
    cores: int = 1

    @property
    def host_names(self) -> list[str]:
        return [f"node-{i}" for i in range(self.hosts)]

    @property
    def custom_links(self) -> bool:
        return (self.latency_s, self.bandwidth_bytes_per_s) != LINK_PRESETS[self.preset]

    def describe(self) -> dict:
        return {"topology": self.topology, "hosts": self.hosts, "links": self.preset,
                "latency_s": self.latency_s, "bandwidth_bytes_per_s": self.bandwidth_bytes_per_s,
                "oversubscription": self.oversubscription, "topo_parameters": self.parameters,
                "cores_per_host": self.cores}


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _balanced(n: int, parts: int) -> list[int]:
    """n as `parts` factors as equal as possible (largest first)."""
    if parts == 1:
        return [n]
    best: list[int] | None = None
    for d in _divisors(n):
        if d < round(n ** (1 / parts)) / 2:
            continue
        rest = _balanced(n // d, parts - 1)
        cand = sorted([d] + rest, reverse=True)
        if best is None or cand[0] / cand[-1] < best[0] / best[-1]:
            best = cand
    return best or [n] + [1] * (parts - 1)


def _fat_tree(hosts: int, levels: int, oversubscription: float) -> str:
    """FAT_TREE parameters: levels; children per switch per level; parents per node per
    level; links per parent. The leaves hold as many hosts as the tree's radix allows
    (about hosts^(1/levels), at most 48); a leaf's uplinks are its hosts divided by the
    oversubscription."""
    if oversubscription < 1:
        raise PlatformError(f"oversubscription {oversubscription} must be at least 1")
    children = _balanced(hosts, levels)
    children.sort()  # the leaves first
    if children[0] > 48:
        raise PlatformError(f"{hosts} hosts need more than 48 ports a switch at {levels} levels; use fattree3")
    parents = [1]
    for level in range(1, levels):
        down = children[level - 1]
        parents.append(max(1, int(round(down / oversubscription))))
    links = [1] * levels
    return f"{levels};{','.join(map(str, children))};{','.join(map(str, parents))};{','.join(map(str, links))}"


def _dragonfly(hosts: int) -> str:
    """DRAGONFLY parameters: groups,links between groups; chassis a group,links; routers a
    chassis,links; hosts a router. Routers of 4 hosts, chassis of 4 routers, groups of
    up to 4 chassis, as many groups as it takes."""
    per_router = 4 if hosts % 4 == 0 else 1
    routers = hosts // per_router
    per_chassis = 4 if routers % 4 == 0 else 1
    chassis = routers // per_chassis
    per_group = next(c for c in (4, 2, 1) if chassis % c == 0)
    groups = chassis // per_group
    return f"{groups},1;{per_group},1;{per_chassis},1;{per_router}"


def make(topology: str, hosts: int, preset: str, oversubscription: float = 1.0, latency_s: float | None = None,
         bandwidth_bytes_per_s: float | None = None, cores: int = 1) -> Platform:
    """`latency_s`, `bandwidth_bytes_per_s`: end-to-end figures in place of the preset's
    (None: the preset's). `cores`: a host's cores (the ranks it runs)."""
    if hosts < 1:
        raise PlatformError("a platform needs at least one host")
    if cores < 1:
        raise PlatformError("a host needs at least one core")
    if preset not in LINK_PRESETS:
        raise PlatformError(f"unknown links '{preset}' (known: {', '.join(LINK_PRESETS)})")
    preset_latency, preset_bandwidth = LINK_PRESETS[preset]
    latency = preset_latency if latency_s is None else latency_s
    bandwidth = preset_bandwidth if bandwidth_bytes_per_s is None else bandwidth_bytes_per_s
    if not (math.isfinite(latency) and latency >= 0):
        raise PlatformError(f"a link latency must be a finite number of seconds >= 0, got {latency_s}")
    if not (math.isfinite(bandwidth) and bandwidth > 0):
        raise PlatformError(f"a link bandwidth must be a finite number of bytes/s > 0, got {bandwidth_bytes_per_s}")
    if topology == "fattree":
        parameters = _fat_tree(hosts, 2, oversubscription)
    elif topology == "fattree3":
        parameters = _fat_tree(hosts, 3, oversubscription)
    elif topology == "torus":
        # SimGrid links a host to itself along a dimension of one: such dimensions go.
        if hosts < 2:
            raise PlatformError("a torus needs at least 2 hosts")
        parameters = ",".join(str(d) for d in _balanced(hosts, 3) if d > 1)
    elif topology == "tofu":
        # Tofu's 6D mesh/torus: X, Y, Z over the machine, a, b, c = 2, 3, 2 within a unit.
        if hosts % 12:
            raise PlatformError(f"a Tofu-like torus has units of 12 hosts; {hosts} is not a multiple of 12")
        parameters = ",".join(str(d) for d in _balanced(hosts // 12, 3) + [2, 3, 2] if d > 1)
    elif topology == "dragonfly":
        parameters = _dragonfly(hosts)
    else:
        raise PlatformError(f"unknown topology '{topology}' (known: {', '.join(TOPOLOGIES)})")
    return Platform(topology, hosts, preset, oversubscription, parameters, latency, bandwidth, cores)


def _seconds(value: float) -> str:
    return f"{value:.9g}s"


def _bytes_per_s(value: float) -> str:
    return f"{value:.9g}Bps"


def xml(platform: Platform) -> str:
    latency, bandwidth = platform.latency_s, platform.bandwidth_bytes_per_s
    kind = {"fattree": "FAT_TREE", "fattree3": "FAT_TREE", "torus": "TORUS", "tofu": "TORUS",
            "dragonfly": "DRAGONFLY"}[platform.topology]
    lat = latency / LINKS_ACROSS[platform.topology]
    loop_lat, loop_bw = SHARED_MEMORY
    return (
        "<?xml version='1.0'?>\n"
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        f"<!-- zbfs-lab: {platform.topology}, {platform.hosts} hosts, {platform.preset} links"
        f" ({latency * 1e6:g} us, {bandwidth / 1e9:g} GB/s), oversubscription {platform.oversubscription:g} -->\n"
        '<platform version="4.1">\n'
        '  <zone id="world" routing="Full">\n'
        f'    <cluster id="cluster" prefix="node-" suffix="" radical="0-{platform.hosts - 1}"'
        f' speed="{HOST_SPEED_FLOPS:g}f" core="{platform.cores}" bw="{_bytes_per_s(bandwidth)}" lat="{_seconds(lat)}"'
        f' loopback_bw="{_bytes_per_s(loop_bw)}" loopback_lat="{_seconds(loop_lat)}"'
        f' topology="{kind}" topo_parameters="{platform.parameters}"/>\n'
        "  </zone>\n"
        "</platform>\n"
    )


def hostfile(platform: Platform, ranks_per_host: int) -> str:
    """One line per rank: the hosts in order, each `ranks_per_host` times (block placement,
    as mpirun places ranks on nodes)."""
    if ranks_per_host < 1:
        raise PlatformError("--ranks-per-host must be at least 1")
    return "".join(f"{name}\n" * ranks_per_host for name in platform.host_names)


def hosts_for(ranks: int, ranks_per_host: int) -> int:
    return math.ceil(ranks / ranks_per_host)
