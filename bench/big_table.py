"""bench/big's table: the targets of issue 14 and the text bench/big prints
(its figures per case, the medians of --repeat, what each column means)."""
import statistics

from bench import MIB

GIB = 1 << 30
KIND_NAME = {"unsigned": "unsigned", "signed": "signed",
             "sec": "signed+encrypted+compressed"}
TARGET_HWM = 64 * MIB        # every 1 GiB case
TARGET_MBPS = 100.0          # 1 GiB signed+encrypted+compressed


def human(n):
    """Bytes as '1 GiB', '64 MiB', '1.5 GiB'."""
    for unit, size in (("TiB", 1 << 40), ("GiB", GIB), ("MiB", MIB)):
        if n >= size:
            v = n / size
            return ("%d %s" if v == int(v) else "%.1f %s") % (v, unit)
    return "%d bytes" % n


def targets(r, size_1g):
    """The issue 14 targets that apply to case r: [(text, met)]."""
    at = "" if r["size"] == GIB else " (the target is for 1 GiB)"
    out = []
    if r["size"] == size_1g:
        out.append(("VmHWM <= 64 MiB%s" % at, r.get("hwm", 1 << 62) <= TARGET_HWM))
        if r["kind"] == "sec":
            out.append((">= 100 MB/s%s" % at, r.get("mbps", 0) >= TARGET_MBPS))
    else:
        out.append(("%s accepted" % human(r["size"]), r["ok"]))
    return out


def crypto_alone(kind, speed):
    """MB/s one core could reach doing only the case's cryptography:
    SHA-256 once (content hash) unsigned, twice signed (the SwA reference
    digest too), and AES-128-GCM once more encrypted."""
    t = (1 if kind == "unsigned" else 2) / speed["sha256"]
    if kind == "sec":
        t += 1 / speed["aes-128-gcm"]
    return 1 / t


def render_medians(big):
    """With --repeat: per case its runs' MB/s, their median, and the
    target judged on the median (one run decides nothing here)."""
    if big.a.repeat < 2:
        return []
    lines = ["", "== --repeat %d: every run of a case, and their median ==" %
             big.a.repeat]
    seen = []
    for r in big.cases:
        key = (r["backend"], r["kind"], r["size"], r["binary"])
        if "run" in r and key not in seen:
            seen.append(key)
    for backend, kind, size, binary in seen:
        rs = [r for r in big.cases if (r["backend"], r["kind"], r["size"],
              r["binary"]) == (backend, kind, size, binary) and "mbps" in r]
        if not rs:
            continue
        mbps = sorted(r["mbps"] for r in rs)
        med = statistics.median(mbps)
        tg = ""
        if kind == "sec" and size == GIB:
            tg = "  >= 100 MB/s on the median: %s" % (
                "met" if med >= TARGET_MBPS else "NOT met")
        lines.append("%-38s %-10s %s runs %s  median %.0f MB/s%s" % (
            "%s %s" % (human(size), KIND_NAME[kind]), backend,
            ("--as4gw-b" if binary == "B" else "--as4gw") if big.a.as4gw_b
            else "",
            " ".join("%.0f" % r["mbps"] for r in rs), med, tg))
    return lines


def render(big):
    a, lines = big.a, []
    lines.append("== run ==")
    for k, v in big.facts.items():
        lines.append("%-14s %s" % (k, v))
    lines.append("%-14s random bytes from os.urandom: INCOMPRESSIBLE, so "
                 "--compress costs deflate and inflate without making the "
                 "message smaller" % "payload")
    lines.append("")
    lines.append("== the machine, measured in the same run (openssl speed "
                 "-evp, 16 KiB blocks, one core) ==")
    for alg, v in big.speed.items():
        lines.append("%-14s %8.0f MB/s" % (alg, v))
    lines.append("")
    lines.append("== as4gw: one fresh gateway and an empty store per case ==")
    lines.append("%-38s %-10s %10s %8s %7s %7s %8s %5s %7s %8s %7s %-8s %s" % (
        "case", "backend", "VmHWM", "time", "CPU", "PG CPU", "WAL", "steal",
        "MB/s", "crypto", "build", "checks", "targets (issue 14)"))
    for r in big.cases:
        name = "%s %s" % (human(r["size"]), KIND_NAME[r["kind"]])
        if a.repeat > 1 and "run" in r:
            name += " #%d" % r["run"]
        if a.as4gw_b:
            name += " (%s)" % r["binary"]
        tg = "; ".join("%s: %s" % (t, "met" if ok else "NOT met")
                       for t, ok in targets(r, a.size))
        checks = "ok" if r["ok"] else ("no receipt" if not r.get("receipt")
                                       else "BYTES!")
        lines.append("%-38s %-10s %10s %8s %7s %7s %8s %5s %7s %8.0f %7s %-8s %s" % (
            name, r["backend"],
            "%.1f MiB" % (r["hwm"] / MIB) if "hwm" in r else "-",
            "%.1f s" % r["secs"] if "secs" in r else "-",
            "%.1f s" % r["cpu"] if "cpu" in r else "-",
            "%.1f s" % r["pgcpu"] if "pgcpu" in r else "-",
            "%.0f MiB" % (r["wal"] / MIB) if "wal" in r else "-",
            "%.0f %%" % r["steal"] if "steal" in r else "-",
            "%.0f" % r["mbps"] if "mbps" in r else "-",
            crypto_alone(r["kind"], big.speed),
            "%.0f s" % r.get("build", 0), checks, tg))
    lines.extend(render_medians(big))
    lines.append("")
    lines.append("VmHWM: the gateway's peak RSS after the answer; time: first "
                 "byte sent to last byte of the answer; CPU: the gateway "
                 "process's user + system time meanwhile; PG CPU: the "
                 "PostgreSQL server's (postmaster, backends, checkpointer, "
                 "WAL writer ...) meanwhile; WAL: bytes of WAL it wrote "
                 "meanwhile; steal: CPU time the host gave to other "
                 "machines meanwhile, in % of the case's time x CPUs (a "
                 "shared host's noise: at 50 % this machine had one core); "
                 "MB/s: 10^6 payload "
                 "bytes per second; crypto: MB/s of the case's cryptography "
                 "alone on one core (bench/README.md); build: as4gw push "
                 "--write-requests, not timed as the gateway's")
    for p in big.problems:
        lines.append("!! " + p)
    return "\n".join(lines) + "\n"
