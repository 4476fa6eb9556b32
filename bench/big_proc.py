"""bench/big's readings of processes and of the PostgreSQL server: CPU time
from /proc (a process, a server's processes, the host's steal), the server's
databases and WAL position, and the server settings README.md asks for."""
import os
import re
import time
import urllib.parse
import uuid

from bench import KIB, MIB, BenchError, run


def pg_settings():
    """The server settings README.md ("Large payloads on PostgreSQL: server
    settings") asks of a server taking large payloads: shared_buffers 25 %
    of RAM, max_wal_size above the WAL of the largest push (5 GiB writes
    about 5.4 GB), wal_buffers 64MB."""
    with open("/proc/meminfo") as f:
        mem = int(f.readline().split()[1]) * KIB
    return {"shared_buffers": "%dMB" % (mem // 4 // MIB),
            "max_wal_size": "16GB", "wal_buffers": "64MB"}


def cpu_seconds(pid, children=False):
    """User + system CPU time of a process, all its threads (/proc/PID/stat);
    children: plus that of its children it has waited for."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / os.sysconf("SC_CLK_TCK")


def steal_seconds():
    """CPU time the hypervisor gave to others while this virtual machine
    wanted it, all CPUs together (/proc/stat "steal"): a shared host's
    noise, which a case's MB/s cannot show by itself."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return int(fields[8]) / os.sysconf("SC_CLK_TCK")


def pg_children(pid):
    """The PIDs whose parent is pid (a postmaster's backends and auxiliary
    processes)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(d))
        except (OSError, ValueError, IndexError):
            pass
    return out


class PgServer:
    """Databases on a PostgreSQL server named by an admin DSN (--pg-dsn) or
    on the throwaway cluster of bench.py's Postgres."""

    def __init__(self, psql, admin_dsn=None, cluster=None):
        self.psql, self.admin, self.cluster = psql, admin_dsn, cluster

    def dsn(self, db):
        if self.cluster is not None:
            return self.cluster.dsn(db)
        u = urllib.parse.urlsplit(self.admin)
        return urllib.parse.urlunsplit((u.scheme, u.netloc, "/" + db, u.query, ""))

    def sql(self, sql):
        if self.cluster is not None:
            run([self.psql, "-X", "-q", "-v", "ON_ERROR_STOP=1"] +
                self.cluster.conn_args() + ["-d", "postgres", "-c", sql])
        else:
            run([self.psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d",
                 self.admin, "-c", sql])

    def create(self):
        db = "as4gw_big_" + uuid.uuid4().hex[:12]
        self.sql("CREATE DATABASE %s" % db)
        return db

    def drop(self, db):
        self.sql("DROP DATABASE IF EXISTS %s WITH (FORCE)" % db)

    def value(self, sql):
        """The one value sql returns (text)."""
        conn = (self.cluster.conn_args() + ["-d", "postgres"]
                if self.cluster is not None else ["-d", self.admin])
        return run([self.psql, "-X", "-q", "-t", "-A", "-v",
                    "ON_ERROR_STOP=1"] + conn + ["-c", sql]).strip()

    def alter_system(self, settings, on):
        """--pg-set-b: each of settings (name -> value) by ALTER SYSTEM SET
        (on) or RESET (not on), then a reload, waited for until a new
        session sees it (a new gateway's connections are new sessions).
        Only settings a reload changes; one given on the server's command
        line (the throwaway cluster's own) cannot be changed this way."""
        for name, value in sorted(settings.items()):
            self.sql("ALTER SYSTEM SET %s = '%s'" % (name, value) if on
                     else "ALTER SYSTEM RESET %s" % name)
        self.sql("SELECT pg_reload_conf()")
        want = "postgresql.auto.conf" if on else ""
        for _ in range(100):
            got = [self.value("SELECT source || ' ' || coalesce(sourcefile, "
                              "'') FROM pg_settings WHERE name = '%s'" % n)
                   for n in sorted(settings)]
            if all(g.endswith(want) if on else not g.endswith(
                    "postgresql.auto.conf") for g in got):
                return
            time.sleep(0.1)
        raise BenchError("--pg-set-b: the server did not take %s (%s)" % (
            ", ".join(sorted(settings)), "; ".join(got)))

    def postmaster(self):
        """The server's postmaster PID (the parent of its checkpointer),
        None when this machine's /proc does not show it."""
        try:
            pid = int(self.value("SELECT pid FROM pg_stat_activity WHERE "
                                 "backend_type = 'checkpointer'"))
            with open("/proc/%d/status" % pid) as f:
                return int(re.search(r"^PPid:\s+(\d+)", f.read(),
                                     re.M).group(1))
        except (BenchError, ValueError, AttributeError, OSError):
            return None

    def wal_lsn(self):
        """pg_current_wal_lsn() in bytes."""
        hi, lo = self.value("SELECT pg_current_wal_lsn()").split("/")
        return (int(hi, 16) << 32) + int(lo, 16)

    def usage(self, pid):
        """(CPU seconds, WAL position) of the server whose postmaster is
        pid: user + system time of the postmaster, of its children alive
        now and of those it has reaped (cutime + cstime), so a backend that
        exits between two readings is still counted."""
        total = cpu_seconds(pid, children=True) if pid else None
        for child in (pg_children(pid) if pid else ()):
            try:
                total += cpu_seconds(child)
            except OSError:
                pass        # exited meanwhile: in the postmaster's cutime
        return total, self.wal_lsn()
