#!/usr/bin/env python3
"""bench/bench.py: the as4gw benchmark behind bench/run (python3 stdlib only).

Measures, in one run, the machine's own limits (openssl speed, pgbench with
the accept transaction's SQL shape, wrk against GET /healthz, pg_test_fsync)
and as4gw end to end on PostgreSQL and SQLite at 1, 8, 32 and 128 concurrent
connections: (a) signed 4 KiB messages, (e) the same signed as eDelivery AS4
2.0 (Ed25519) to a 2.0 leg, (b) signed + encrypted + compressed, (c)
duplicate replay; peak RSS idle, under load and for one 100 MiB payload.
Prints ONE fixed-width table on stdout (progress goes to stderr), and the
same table as markdown with --out FILE.  bench/README.md explains every
figure.  Every process and temporary directory it makes is removed on exit.
"""

import argparse
import datetime
import gzip
import math
import os
import platform
import re
import shlex
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONC = (1, 8, 32, 128)
KIB = 1024
MIB = 1024 * 1024
NS_ROLE = "http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/"
ACTION = {"a": "urn:as4gw:bench:Signed", "b": "urn:as4gw:bench:SignedEncrypted",
          "e": "urn:as4gw:bench:Signed20", "u": "urn:as4gw:bench:Unsigned"}
KIND_NAME = {"a": "(a) signed, 4 KiB", "b": "(b) signed+encrypted+gzip",
             "c": "(c) duplicate replay", "e": "(e) 2.0 signed, 4 KiB"}
# the kinds of NEW messages, in the order of the cells and of the table's
# rows: (e) is (a) under eDelivery AS4 2.0, so it stands next to (a)
NEW_KINDS = ("a", "e", "b")
# first guess of the gateway's rate (messages/s) that sizes the pre-built
# sets before any cell ran; later cells size them from what they measured
FIRST_GUESS = {"a": 3000, "b": 2000, "e": 3000}


class BenchError(Exception):
    """A cell or a step could not run: bench.py stops with this message."""


def log(msg):
    """Progress line on stderr."""
    print("bench: " + msg, file=sys.stderr, flush=True)


def run(cmd, **kw):
    """Run cmd, return its stdout; BenchError with its output on failure."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, **kw)
    if p.returncode != 0:
        raise BenchError("%s failed (exit %d): %s" % (
            shlex.join(cmd), p.returncode, (p.stderr or p.stdout)[-2000:]))
    return p.stdout


def free_port(lo, hi):
    """A TCP port in [lo, hi) nothing listens on (127.0.0.1)."""
    for port in range(lo, hi):
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", port))
            return port
        except OSError:
            continue
        finally:
            s.close()
    raise BenchError("no free port in %d..%d" % (lo, hi - 1))


def proc_status(pid, field):
    """A kB field of /proc/PID/status (VmRSS, VmHWM) in bytes."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * KIB
    raise BenchError("no %s in /proc/%d/status" % (field, pid))


def fs_type(path):
    """File system type of the mount holding path (/proc/self/mounts)."""
    best, kind = "", "?"
    with open("/proc/self/mounts") as f:
        for line in f:
            mnt, typ = line.split()[1:3]
            if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and \
                    len(mnt) > len(best):
                best, kind = mnt, typ
    return kind


class Procs:
    """Every child process bench.py starts, so cleanup can end them."""

    def __init__(self):
        self.live = []

    def start(self, cmd, **kw):
        """Popen in its own session (a ^C reaches bench.py only)."""
        p = subprocess.Popen(cmd, start_new_session=True, **kw)
        self.live.append(p)
        return p

    def end(self, p, sig=signal.SIGTERM, wait=30):
        """Signal p, wait for it (SIGKILL after wait s); its exit code."""
        if p.poll() is None:
            p.send_signal(sig)
            try:
                p.wait(wait)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if p in self.live:
            self.live.remove(p)
        return p.returncode

    def end_all(self):
        """Cleanup: end what is still running (ours only, by pid)."""
        for p in list(self.live):
            self.end(p, wait=10)


# ---- configuration --------------------------------------------------------

def leg_xml(pid, action, encryption, certs, v20=False):
    """One P-Mode leg: the dev sender, signing required (encryption None:
    an unsigned leg, for the 100 MiB payload when it cannot be signed).
    v20: profile="edelivery-2.0", the dev Ed25519 sender, the gateway's
    X25519 pair (as conf/as4gw.xml's dev-2.0 leg); its Receipts are signed
    with the gateway's Ed25519 pair (<signingKeys>)."""
    if encryption is None:
        security = '<security signing="never" encryption="never"/>'
    elif v20:
        security = """<security signing="required" encryption="%s" \
profile="edelivery-2.0">
      <signer><certificate>%s/sender-ed25519.crt</certificate></signer>
      <trust><anchor>%s/ca.crt</anchor></trust>
      <decryption><certificate>%s/gateway-x25519.crt</certificate>
        <key>%s/gateway-x25519.key</key></decryption>
    </security>""" % (encryption, certs, certs, certs, certs)
    else:
        security = """<security signing="required" encryption="%s">
      <signer><certificate>%s/sender.crt</certificate></signer>
      <trust><anchor>%s/ca.crt</anchor></trust>
    </security>""" % (encryption, certs, certs)
    return """  <pmode id="%s">
    <from role="%sinitiator"><partyId>urn:as4gw:dev:sender</partyId></from>
    <to role="%sresponder"><partyId>urn:as4gw:dev:gateway</partyId></to>
    <service>urn:as4gw:dev:service</service>
    <action>%s</action>
    %s
    <receipt nonRepudiation="true"/>
  </pmode>
""" % (pid, NS_ROLE, NS_ROLE, action, security)


def config_xml(port, store, threads, certs):
    """The gateway configuration of every cell (schema: conf/as4gw.xml)."""
    return """<?xml version="1.0" encoding="UTF-8"?>
<!-- generated by bench/bench.py -->
<as4gw xmlns="urn:as4gw:config:1">
  <gateway>
    <listen>127.0.0.1:%d</listen>
    <path>/as4</path>
    <store>%s</store>
    <threads>%d</threads>
    <signing>
      <certificate>%s/gateway.crt</certificate>
      <key>%s/gateway.key</key>
    </signing>
    <signingKeys>
      <signing id="ed25519">
        <certificate>%s/gateway-ed25519.crt</certificate>
        <key>%s/gateway-ed25519.key</key>
      </signing>
    </signingKeys>
    <limits>
      <maxBodyBytes>%d</maxBodyBytes>
      <requestDeadlineSeconds>600</requestDeadlineSeconds>
      <perIpConnections>512</perIpConnections>
      <maxConnections>512</maxConnections>
      <requestMemoryBytes>%d</requestMemoryBytes>
    </limits>
    <purge><intervalSeconds>0</intervalSeconds></purge>
  </gateway>
%s%s%s%s</as4gw>
""" % (port, store, threads, certs, certs, certs, certs, 256 * MIB,
       2048 * MIB, leg_xml("bench-signed", ACTION["a"], "optional", certs),
       leg_xml("bench-signed-2.0", ACTION["e"], "optional", certs, True),
       leg_xml("bench-encrypted", ACTION["b"], "required", certs),
       leg_xml("bench-unsigned", ACTION["u"], None, certs))


# ---- PostgreSQL -------------------------------------------------------------

class Postgres:
    """A throwaway cluster (initdb under the temp dir), fsync and
    synchronous_commit on; stopped and removed at exit.  settings: more
    server settings (name -> value) on top of shared_buffers=128MB."""

    def __init__(self, tmp, pgbin, port, settings=None):
        self.dir = os.path.join(tmp, "pg")
        self.pgbin = pgbin
        self.port = port
        self.settings = dict(settings or {})
        self.root = os.getuid() == 0
        self.user = "postgres" if self.root else os.environ.get(
            "USER", "postgres")
        self.started = False

    def as_pg(self, cmd):
        """cmd as the cluster's owner (postgres when run as root)."""
        return (["runuser", "-u", "postgres", "--"] + cmd) if self.root \
            else cmd

    def start(self):
        """initdb and start."""
        os.mkdir(self.dir)
        if self.root:
            shutil.chown(self.dir, "postgres")
        data = os.path.join(self.dir, "data")
        run(self.as_pg([self.pgbin + "/initdb", "-D", data, "-A", "trust",
                        "-U", self.user, "-E", "UTF8"]))
        opts = ("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=on "
                "-c synchronous_commit=on -c shared_buffers=128MB "
                "-c max_connections=300" % (self.port, self.dir))
        for name, value in sorted(self.settings.items()):
            opts += " -c %s=%s" % (name, value)
        run(self.as_pg([self.pgbin + "/pg_ctl", "-D", data, "-l",
                        os.path.join(self.dir, "log"), "-w", "-o", opts,
                        "start"]))
        self.started = True

    def stop(self):
        """Stop the cluster (cleanup)."""
        if self.started:
            subprocess.run(self.as_pg([
                self.pgbin + "/pg_ctl", "-D", os.path.join(self.dir, "data"),
                "-m", "fast", "-w", "stop"]), stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)
            self.started = False

    def conn_args(self):
        """libpq command-line connection options."""
        return ["-h", "127.0.0.1", "-p", str(self.port), "-U", self.user]

    def dsn(self, db):
        """URI of database db."""
        return "postgresql://%s@127.0.0.1:%d/%s" % (self.user, self.port, db)

    def recreate(self, db):
        """DROP and CREATE database db (an empty store)."""
        for sql in ("DROP DATABASE IF EXISTS %s WITH (FORCE)" % db,
                    "CREATE DATABASE %s" % db):
            run([self.pgbin + "/psql", "-X", "-q", "-v", "ON_ERROR_STOP=1"] +
                self.conn_args() + ["-d", "postgres", "-c", sql])


# ---- the gateway ----------------------------------------------------------------

class Gateway:
    """One `as4gw serve` process with a generated configuration."""

    def __init__(self, bench, backend, label):
        self.b = bench
        self.backend = backend
        self.label = label
        self.p = None
        self.base = "http://127.0.0.1:%d" % bench.gw_port

    def start(self):
        """Reset the store (empty), start, wait until /healthz answers."""
        b = self.b
        if self.backend == "pg":
            b.pg.recreate("as4gw_bench")
            store = b.pg.dsn("as4gw_bench")
        else:
            db = os.path.join(b.tmp, "as4gw-bench.db")
            for suffix in ("", "-wal", "-shm", "-journal"):
                if os.path.exists(db + suffix):
                    os.unlink(db + suffix)
            store = "sqlite:" + db
        conf = os.path.join(b.tmp, "gw-%s.xml" % self.backend)
        with open(conf, "w") as f:
            f.write(config_xml(b.gw_port, store, b.threads, b.certs))
        self.logpath = os.path.join(b.tmp, "gw-%s.log" % self.label)
        with open(self.logpath, "w") as logf:
            self.p = b.procs.start([b.as4gw, "serve", "-c", conf],
                                   stdout=logf, stderr=logf)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.p.poll() is not None:
                raise BenchError("gateway (%s) exited at start: %s" % (
                    self.label, self.log_tail()))
            try:
                with urllib.request.urlopen(self.base + "/healthz",
                                            timeout=2) as r:
                    if r.status == 200:
                        return self
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.05)
        raise BenchError("gateway (%s) did not answer /healthz in 60 s"
                         % self.label)

    def log_tail(self):
        """The last lines of the gateway's log (for an error message)."""
        with open(self.logpath, errors="replace") as f:
            return "".join(f.readlines()[-5:])

    def alive(self):
        """BenchError when the gateway died."""
        if self.p.poll() is not None:
            raise BenchError("gateway (%s) died (exit %s): %s" % (
                self.label, self.p.returncode, self.log_tail()))

    def metrics(self):
        """{outcome: count} of as4gw_messages_total plus 'in_flight'."""
        self.alive()
        with urllib.request.urlopen(self.base + "/metrics", timeout=30) as r:
            text = r.read().decode()
        m = {}
        for line in text.splitlines():
            g = re.match(r'as4gw_messages_total\{outcome="([a-z-]+)"\} (\d+)',
                         line)
            if g:
                m[g.group(1)] = int(g.group(2))
            g = re.match(r"as4gw_requests_in_flight (\d+)", line)
            if g:
                m["in_flight"] = int(g.group(1))
        return m

    def settle(self):
        """Metrics once no request but this one is in flight (max 30 s)."""
        deadline = time.time() + 30
        while True:
            m = self.metrics()
            if m.get("in_flight", 0) <= 1 or time.time() > deadline:
                return m
            time.sleep(0.1)

    def rss(self, field="VmRSS"):
        """VmRSS or VmHWM in bytes."""
        self.alive()
        return proc_status(self.p.pid, field)

    def stop(self):
        """VmHWM, then SIGTERM (drain); BenchError on an unclean exit."""
        hwm = self.rss("VmHWM")
        rc = self.b.procs.end(self.p)
        if rc != 0:
            raise BenchError("gateway (%s) exit %s at stop: %s" % (
                self.label, rc, self.log_tail()))
        return hwm


# ---- the benchmark ----------------------------------------------------------

class Bench:
    """State of one run: options, temp dir, processes, results."""

    def __init__(self, args):
        self.a = args
        self.procs = Procs()
        self.tmp = None
        self.pg = None
        self.as4gw = os.path.abspath(args.as4gw)
        self.certs = os.path.join(ROOT, "certs", "dev")
        self.load_lua = os.path.join(ROOT, "bench", "load.lua")
        self.dur = args.duration
        self.threads = 0
        self.res = {}      # results by key
        self.problems = []  # cells whose checks failed
        self.sets = {}     # kind -> [path, count]
        self.rate_seen = dict(FIRST_GUESS)
        self.hwm = {}      # backend -> max VmHWM under load

    # -- machine facts and limits ------------------------------------------

    def facts(self):
        """Machine and version facts."""
        model = "?"
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            mem = int(f.readline().split()[1]) * KIB
        r = self.res
        r["nproc"] = len(os.sched_getaffinity(0))
        r["machine"] = "%d CPUs (%s), %.1f GiB RAM, Linux %s, load average " \
            "at start %.2f" % (
            r["nproc"], model, mem / (1024 * MIB), platform.release(),
            os.getloadavg()[0])
        commit = run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]
                     ).strip() if shutil.which("git") else "?"
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain",
                                "--untracked-files=no"],
                               stdout=subprocess.PIPE, text=True).stdout
        if dirty.strip():
            commit += " + uncommitted changes"
        wrk_v = subprocess.run(["wrk", "-v"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True).stdout
        wrk_v = (re.findall(r"\d+\.\d+\.\d+", wrk_v) + ["?"])[0]
        pg_v = re.search(r"\d+\.\d+", run([self.pgbin + "/postgres",
                                              "--version"])).group(0)
        ossl = run(["openssl", "version"]).split()[1]
        r["versions"] = ("as4gw %s (release build), OpenSSL %s, PostgreSQL %s,"
                         " SQLite %s, wrk %s" % (commit, ossl, pg_v,
                                                 sqlite3.sqlite_version, wrk_v))

    def openssl_limits(self):
        """openssl speed -multi NPROC: RSA-2048, Ed25519 and AES-128-GCM
        4 KiB."""
        n = str(self.res["nproc"])
        s = str(self.a.openssl_seconds)
        log("openssl speed rsa2048, ed25519, aes-128-gcm (-multi %s, %s s "
            "each)" % (n, s))
        out = run(["openssl", "speed", "-seconds", s, "-multi", n, "-mr",
                   "rsa2048"])
        g = re.search(r"^\+F2:\d+:2048:([\d.]+):([\d.]+)$", out, re.M)
        if not g:
            raise BenchError("openssl speed rsa2048: no +F2 line: " + out[-500:])
        self.res["sign"] = float(g.group(1))
        self.res["verify"] = float(g.group(2))
        out = run(["openssl", "speed", "-seconds", s, "-multi", n, "-mr",
                   "ed25519"])
        g = re.search(r"^\+F6:\d+:253:Ed25519:([\d.]+):([\d.]+)$", out, re.M)
        if not g:
            raise BenchError("openssl speed ed25519: no +F6 line: "
                             + out[-500:])
        self.res["ed_sign"] = float(g.group(1))
        self.res["ed_verify"] = float(g.group(2))
        out = run(["openssl", "speed", "-seconds", s, "-multi", n, "-mr",
                   "-evp", "aes-128-gcm", "-bytes", "4096"])
        g = re.search(r"^\+F:\d+:AES-128-GCM:([\d.]+)$", out, re.M)
        if not g:
            raise BenchError("openssl speed aes-128-gcm: no +F line: "
                             + out[-500:])
        self.res["aes4k"] = float(g.group(1)) / 4096

    def gunzip_limit(self):
        """zlib inflate of a gzip'd 4 KiB random payload, one core (python's
        zlib is the same C library), times the cores."""
        data = gzip.compress(os.urandom(4096))
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < 1.0:
            for _ in range(200):
                zlib.decompress(data, 31)
            n += 200
        self.res["gunzip4k"] = n / (time.perf_counter() - t0) * \
            self.res["nproc"]

    def fsync_speed(self):
        """pg_test_fsync -s 1: the fdatasync line of 'one 8kB write'."""
        log("pg_test_fsync -s 1 (in the temp dir, where the cluster lives)")
        out = run([self.pgbin + "/pg_test_fsync", "-s", "1", "-f",
                   os.path.join(self.tmp, "fsync.tmp")])
        g = re.search(r"^\s*fdatasync\s+([\d.]+) ops/sec\s+(\d+) usecs/op",
                      out, re.M)
        fs = fs_type(self.tmp)
        self.res["fsync"] = ("%d/s (%s us/op)" % (float(g.group(1)),
                                                  g.group(2))
                             if g else "n/a (no fdatasync line)") + \
            " on %s (%s)%s" % (fs, self.tmp.rsplit("/", 1)[0] or "/",
                               "  !! fsync is a no-op there: use --tmpdir"
                               if fs in ("tmpfs", "ramfs") else "")

    # -- pre-built requests ---------------------------------------------------

    def push_cmd(self, kind, path, count):
        """`as4gw push --write-requests` for kind a, b or e (e: (a) as
        eDelivery AS4 2.0 sends it, signed with the dev Ed25519 sender)."""
        sender = "sender-ed25519" if kind == "e" else "sender"
        cmd = [self.as4gw, "push", "--write-requests", path,
               "--count", str(count), "--quiet",
               "--from", "urn:as4gw:dev:sender",
               "--to", "urn:as4gw:dev:gateway",
               "--service", "urn:as4gw:dev:service",
               "--action", ACTION[kind],
               "--payload", self.payload4k + ";mime=application/octet-stream",
               "--sign", "--sign-cert", "%s/%s.crt" % (self.certs, sender),
               "--sign-key", "%s/%s.key" % (self.certs, sender)]
        if kind == "e":
            cmd += ["--profile", "edelivery-2.0"]
        if kind == "b":
            cmd += ["--encrypt", "--recipient-cert",
                    self.certs + "/gateway.crt", "--compress"]
        return cmd

    def build_set(self, name, kind, count):
        """Append count new messages to set `name`: one push process per
        core writing its own part, parts concatenated."""
        if name not in self.sets:
            self.sets[name] = [os.path.join(self.tmp, "set-%s.req" % name), 0]
        path = self.sets[name][0]
        k = self.res["nproc"]
        per = math.ceil(count / k)
        t0 = time.time()
        parts, ps = [], []
        for i in range(k):
            part = "%s.part%d" % (path, i)
            parts.append(part)
            ps.append(self.procs.start(self.push_cmd(kind, part, per),
                                       stderr=subprocess.PIPE, text=True))
        limit = max(120, per / 20)   # a build runs at >= 100 messages/s
        for p in ps:
            try:
                err = p.communicate(timeout=max(1, t0 + limit - time.time()))[1]
            except subprocess.TimeoutExpired:
                raise BenchError("as4gw push --write-requests did not build %d "
                                 "messages in %.0f s (a hang?): %s" % (
                                     per, limit, shlex.join(p.args)))
            self.procs.live.remove(p)
            if p.returncode != 0:
                raise BenchError("as4gw push --write-requests failed: " + err)
        with open(path, "ab") as out:
            for part in parts:
                with open(part, "rb") as f:
                    shutil.copyfileobj(f, out, 16 * MIB)
                os.unlink(part)
        self.sets[name][1] += per * k
        log("set %s: +%d messages (%.1f s), now %d (%.0f MiB)" % (
            name, per * k, time.time() - t0, self.sets[name][1],
            os.path.getsize(path) / MIB))

    def ensure_set(self, kind, rate):
        """Make set `kind` hold more than a cell at `rate` msg/s can send."""
        need = int(rate * self.dur * 1.3) + 500
        have = self.sets.get(kind, [None, 0])[1]
        if have < need:
            self.build_set(kind, kind, need - have)

    # -- wrk ------------------------------------------------------------------

    def wrk_cmd(self, url, c, dur, file=None, once=False):
        """wrk with bench/load.lua: -t 1 for c=1, else -t 2."""
        t = 1 if c == 1 else 2
        script_args = ["GET"] if file is None else \
            [file, str(t)] + (["once"] if once else [])
        return ["wrk", "-t", str(t), "-c", str(c), "-d", "%ds" % dur,
                "--timeout", "60s", "-s", self.load_lua, url, "--"] + script_args

    @staticmethod
    def wrk_parse(out, err, cmd):
        """The BENCH line of load.lua as a dict (ints; first_bad a str)."""
        g = re.search(r"^BENCH (.*)$", out, re.M)
        if not g:
            raise BenchError("wrk printed no BENCH line: %s\n%s%s" % (
                shlex.join(cmd), out[-1000:], err[-1000:]))
        r = {}
        for kv in g.group(1).split():
            k, v = kv.split("=", 1)
            r[k] = v if k == "first_bad" else int(v)
        if r["requests"] == 0:
            raise BenchError("wrk completed no request: " + shlex.join(cmd))
        r["rate"] = r["requests"] / (r["duration_us"] / 1e6)
        return r

    def wrk(self, url, c, dur, file=None):
        """One wrk run; its parsed BENCH line."""
        cmd = self.wrk_cmd(url, c, dur, file)
        p = self.procs.start(cmd, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        out, err = p.communicate()
        self.procs.live.remove(p)
        if p.returncode != 0:
            raise BenchError("wrk failed (exit %d): %s\n%s" % (
                p.returncode, shlex.join(cmd), err[-1000:]))
        return self.wrk_parse(out, err, cmd)

    # -- cells ------------------------------------------------------------------

    def check(self, label, r, d, c, expect):
        """Cross-check a cell against the gateway's counters; problems are
        recorded (the figure is marked) and reported under the table."""
        got = d.get(expect, 0)
        msgs = []
        if not r["requests"] <= got <= r["requests"] + c:
            msgs.append("%d answered but %s +%d" % (r["requests"], expect, got))
        for k, v in d.items():
            if k != expect and k != "in_flight" and v != 0:
                msgs.append("%s +%d" % (k, v))
        if r["not_receipt"] or r["errors_http"] or r["errors_socket"]:
            msgs.append("%d answers not a Receipt (first: %s), %d HTTP errors,"
                        " %d socket errors" % (r["not_receipt"], r["first_bad"],
                                               r["errors_http"],
                                               r["errors_socket"]))
        r["ok"] = not msgs
        r["stored"] = got
        if msgs:
            self.problems.append("%s: %s" % (label, "; ".join(msgs)))
        log("%s: %.0f/s p50 %.1f ms p99 %.1f ms, %s +%d%s" % (
            label, r["rate"], r["p50_us"] / 1e3, r["p99_us"] / 1e3, expect,
            got, "" if r["ok"] else "  !! " + "; ".join(msgs)))

    def metrics_delta(self, m0, m1):
        """Counter differences (in_flight dropped)."""
        return {k: m1.get(k, 0) - m0.get(k, 0) for k in m1 if k != "in_flight"}

    def cell_new(self, backend, kind, c):
        """A cell of NEW messages: empty store, fresh gateway, the set sized
        from the fastest rate seen so far; a wrap grows the set and repeats
        the cell (twice at most, then the figure is refused)."""
        label = "%s %s c=%d" % (backend, KIND_NAME[kind], c)
        for attempt in range(3):
            self.ensure_set(kind, self.rate_seen[kind])
            gw = Gateway(self, backend, "%s-%s-%d" % (backend, kind, c)).start()
            m0 = gw.metrics()
            r = self.wrk(gw.base + "/as4", c, self.dur, self.sets[kind][0])
            d = self.metrics_delta(m0, gw.settle())
            self.hwm[backend] = max(self.hwm.get(backend, 0), gw.stop())
            self.rate_seen[kind] = max(self.rate_seen[kind], r["rate"])
            if r["wraps"] == 0:
                self.check(label, r, d, c, "new")
                return r
            log("%s: the set of %d wrapped (%.0f/s): building more" % (
                label, self.sets[kind][1], r["rate"]))
            self.rate_seen[kind] = r["rate"] * 1.2
        r["ok"] = False
        self.problems.append("%s: set wrapped 3 times, figure refused" % label)
        return r

    def store_once(self, gw, name):
        """Send every message of set `name` once (load.lua "once", c=8),
        ending wrk when the counters say all are stored."""
        n = self.sets[name][1]
        m0 = gw.metrics()
        cmd = self.wrk_cmd(gw.base + "/as4", 8, 600, self.sets[name][0], True)
        p = self.procs.start(cmd, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 600
        while p.poll() is None and time.time() < deadline:
            if gw.metrics().get("new", 0) - m0.get("new", 0) >= n:
                break
            time.sleep(0.2)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate()
        self.procs.live.remove(p)
        d = self.metrics_delta(m0, gw.settle())
        if d.get("new", 0) != n or d.get("error", 0) or d.get("drift", 0):
            raise BenchError("storing the replay set: %d messages, counters "
                             "%s\n%s" % (n, d, out[-500:] + err[-500:]))

    def cells_dup(self, backend):
        """(c): store the replay set once, then replay it at each c."""
        gw = Gateway(self, backend, "%s-c" % backend).start()
        self.store_once(gw, "c")
        for c in CONC:
            label = "%s %s c=%d" % (backend, KIND_NAME["c"], c)
            m0 = gw.metrics()
            r = self.wrk(gw.base + "/as4", c, self.dur, self.sets["c"][0])
            d = self.metrics_delta(m0, gw.settle())
            self.check(label, r, d, c, "duplicate")
            self.res[(backend, "c", c)] = r
        self.hwm[backend] = max(self.hwm.get(backend, 0), gw.stop())

    def cells_backend(self, backend):
        """Idle RSS, then (a), (e), (b), (c) at every concurrency."""
        gw = Gateway(self, backend, "%s-idle" % backend).start()
        time.sleep(1)
        self.res[(backend, "idle")] = gw.rss("VmRSS")
        gw.stop()
        for kind in NEW_KINDS:
            for c in CONC:
                self.res[(backend, kind, c)] = self.cell_new(backend, kind, c)
        self.cells_dup(backend)
        self.res[(backend, "hwm")] = self.hwm.get(backend, 0)

    def http_ceiling(self):
        """wrk GET /healthz at every c (a fresh SQLite gateway)."""
        gw = Gateway(self, "sqlite", "healthz").start()
        for c in CONC:
            r = self.wrk(gw.base + "/healthz", c, self.dur)
            if r["not_receipt"] or r["errors_http"] or r["errors_socket"]:
                self.problems.append("GET /healthz c=%d: %d not 200, %d socket"
                                     " errors" % (c, r["not_receipt"],
                                                  r["errors_socket"]))
            log("HTTP ceiling c=%d: %.0f/s p50 %.2f ms p99 %.2f ms" % (
                c, r["rate"], r["p50_us"] / 1e3, r["p99_us"] / 1e3))
            self.res[("http", c)] = r
        gw.stop()

    def pgbench(self):
        """pgbench with the accept transaction's SQL at every c, each on a
        freshly migrated database; tps and p50/p99 from its -l log.  -T
        gets 2 s + c/16 s more than a cell: pgbench counts the time its
        clients take to connect (30 ms each on a loaded 2-core machine) in
        -T, though not in tps."""
        sql = os.path.abspath(self.a.pgbench_sql)
        conf = os.path.join(self.tmp, "gw-pgbench.xml")
        with open(conf, "w") as f:
            f.write(config_xml(self.gw_port, self.pg.dsn("pgbench_accept"),
                               2, self.certs))
        # the gateway opens one store connection per worker thread: pgbench
        # at c = threads is the database load it can create at most
        for c in sorted(set(CONC) | {self.threads}):
            self.pg.recreate("pgbench_accept")
            run([self.as4gw, "migrate", "-c", conf])
            logdir = os.path.join(self.tmp, "pgbench-%d" % c)
            os.mkdir(logdir)
            out = run([self.pgbin + "/pgbench", "-n", "-f", sql, "-c", str(c),
                       "-j", str(min(2, c)), "-T", str(self.dur + 2 + c // 16), "-l",
                       "--log-prefix", logdir + "/tx"] + self.pg.conn_args()
                      + ["pgbench_accept"], cwd=self.tmp)
            g = re.search(r"^tps = ([\d.]+)", out, re.M)
            fails = re.search(r"^number of failed transactions: (\d+)", out,
                              re.M)
            if not g:
                raise BenchError("pgbench: no tps line:\n" + out[-1000:])
            lat = []
            for name in os.listdir(logdir):
                with open(os.path.join(logdir, name)) as f:
                    lat += [int(line.split()[2]) for line in f]
            shutil.rmtree(logdir)
            lat.sort()
            r = {"rate": float(g.group(1)), "requests": len(lat),
                 "p50_us": lat[len(lat) // 2] if lat else 0,
                 "p99_us": lat[min(len(lat) - 1, len(lat) * 99 // 100)]
                 if lat else 0}
            if fails and int(fails.group(1)):
                self.problems.append("pgbench c=%d: %s failed transactions"
                                     % (c, fails.group(1)))
            log("pgbench accept c=%d: %.0f tps p50 %.1f ms p99 %.1f ms" % (
                c, r["rate"], r["p50_us"] / 1e3, r["p99_us"] / 1e3))
            self.res[("pgbench", c)] = r

    def big_request(self, path, signed):
        """Pre-build the one 100 MiB message into path (signed: within
        --big-build-timeout s, else False)."""
        payload = os.path.join(self.tmp, "payload-100m.bin")
        if not os.path.exists(payload):
            with open(payload, "wb") as f:
                for _ in range(100):
                    f.write(os.urandom(MIB))
        cmd = self.push_cmd("a", path, 1)
        cmd[cmd.index("--payload") + 1] = payload + \
            ";mime=application/octet-stream"
        if not signed:
            cmd = cmd[:cmd.index("--sign")]
            cmd[cmd.index("--action") + 1] = ACTION["u"]
        p = self.procs.start(cmd, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        try:
            out = p.communicate(timeout=self.a.big_build_timeout)[0]
        except subprocess.TimeoutExpired:
            self.procs.end(p, signal.SIGKILL)
            return False
        self.procs.live.remove(p)
        if p.returncode != 0:
            raise BenchError("as4gw push --write-requests (100 MiB) failed: "
                             + out[-500:])
        return True

    def big_payload(self):
        """One 100 MiB payload to a fresh SQLite gateway: its VmHWM.  Signed
        when `as4gw push` can sign it within --big-build-timeout, else
        unsigned (to a signing="never" leg), and the table says so."""
        path = os.path.join(self.tmp, "big.req")
        t0 = time.time()
        log("100 MiB payload: building it signed (at most %d s)"
            % self.a.big_build_timeout)
        signed = self.big_request(path, True)
        how = "signed"
        if not signed:
            how = ("UNSIGNED: `as4gw push --sign` did not finish in %d s"
                   % self.a.big_build_timeout)
            log("100 MiB payload: " + how + "; building it unsigned")
            if os.path.exists(path):
                os.unlink(path)
            self.big_request(path, False)
        else:
            log("100 MiB payload: built signed in %.0f s" % (time.time() - t0))
        os.unlink(os.path.join(self.tmp, "payload-100m.bin"))
        with open(path, "rb") as f:
            ct = f.readline().decode().strip()
            body = f.read(int(f.readline()))
        os.unlink(path)
        gw = Gateway(self, "sqlite", "100mib").start()
        m0 = gw.metrics()
        t0 = time.time()
        status, answer = 0, ""
        try:
            req = urllib.request.Request(gw.base + "/as4", data=body,
                                         headers={"Content-Type": ct})
            with urllib.request.urlopen(
                    req, timeout=self.a.big_send_timeout) as r:
                status, answer = r.status, r.read().decode(errors="replace")
        except (urllib.error.URLError, OSError) as e:
            answer = str(e)
        secs = time.time() - t0
        del body
        d = self.metrics_delta(m0, gw.settle())
        hwm = gw.stop()
        ok = status == 200 and ":Receipt" in answer and d.get("new") == 1
        if not ok:
            self.problems.append("100 MiB payload: HTTP %s, counters %s: %s"
                                 % (status, d, answer[-300:]))
        self.res["big"] = {"hwm": hwm, "secs": secs, "ok": ok, "how": how}
        log("100 MiB payload (%s): VmHWM %.0f MiB (%.2fx), %.1f s%s" % (
            how, hwm / MIB, hwm / (100 * MIB), secs, "" if ok else " !! FAILED"))

    def pick_threads(self):
        """--threads auto: (a) on PostgreSQL at c=32, short, per candidate."""
        best, seen, problems = None, [], list(self.problems)
        dur, self.dur = self.dur, min(self.dur, 4)
        for t in (2, 4, 8, 16, 32):
            self.threads = t
            r = self.cell_new("pg", "a", 32)
            seen.append("%d: %.0f/s" % (t, r["rate"]))
            if best is None or r["rate"] > best[1]:
                best = (t, r["rate"])
        self.dur = dur
        self.problems = problems   # the sweep's cells are not in the table
        self.hwm.pop("pg", None)
        self.threads = best[0]
        self.res["threads_sweep"] = ", ".join(seen)
        log("threads sweep (pg (a) c=32): %s -> %d" % (
            self.res["threads_sweep"], self.threads))

    # -- the whole run -----------------------------------------------------------

    def main(self):
        """Run everything; the results end up in self.res."""
        t_start = time.time()
        self.pgbin = self.a.pgbin or sorted(
            (d for d in os.listdir("/usr/lib/postgresql")),
            key=lambda v: [int(x) for x in re.findall(r"\d+", v)])[-1]
        if "/" not in self.pgbin:
            self.pgbin = "/usr/lib/postgresql/%s/bin" % self.pgbin
        if not os.path.isfile(self.a.pgbench_sql) and "pg" in self.a.backends:
            raise BenchError("%s is missing (the pgbench script of the accept "
                             "transaction)" % self.a.pgbench_sql)
        self.tmp = tempfile.mkdtemp(prefix="as4gw-bench.", dir=self.a.tmpdir)
        os.chmod(self.tmp, 0o711)
        self.gw_port = free_port(18500, 18600)
        self.facts()
        self.openssl_limits()
        self.gunzip_limit()
        self.fsync_speed()
        self.payload4k = os.path.join(self.tmp, "payload-4k.bin")
        with open(self.payload4k, "wb") as f:
            f.write(os.urandom(4096))
        if "pg" in self.a.backends:
            self.pg = Postgres(self.tmp, self.pgbin, free_port(55500, 55600))
            log("PostgreSQL cluster on port %d (%s)" % (self.pg.port,
                                                        self.pg.dir))
            self.pg.start()
        self.build_set("c", "a", self.a.replay_set)
        for kind in NEW_KINDS:
            self.ensure_set(kind, self.rate_seen[kind])
        if self.a.threads == "auto":
            self.pick_threads()
        else:
            self.threads = int(self.a.threads)
        self.http_ceiling()
        if "pg" in self.a.backends:
            self.pgbench()
        for backend in self.a.backends:
            self.cells_backend(backend)
        if not self.a.skip_big:
            self.big_payload()
        self.res["load_end"] = os.getloadavg()[0]
        self.res["elapsed"] = time.time() - t_start

    def cleanup(self):
        """End every process, stop PostgreSQL, remove the temp dir."""
        self.procs.end_all()
        if self.pg is not None:
            self.pg.stop()
        if self.tmp is not None and not self.a.keep_tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)


# ---- the table ----------------------------------------------------------------

def fmt_rate(r):
    """A throughput cell: msgs/s, marked when its checks failed."""
    if r is None:
        return "-"
    return "%.0f%s" % (r["rate"], "" if r.get("ok", True) else "!")


def fmt_ms(us):
    """Milliseconds with 2 (< 1), 1 (< 10) or no decimals."""
    ms = us / 1e3
    return "%.2f" % ms if ms < 1 else "%.1f" % ms if ms < 10 else "%.0f" % ms


def fmt_lat(r):
    """A latency cell: p50/p99 in ms."""
    if r is None:
        return "-"
    return "%s/%s" % (fmt_ms(r["p50_us"]), fmt_ms(r["p99_us"]))


def composite(parts):
    """Time per message adds up on shared cores: 1 / sum(1/limit)."""
    if any(p is None or p <= 0 for p in parts):
        return None
    return 1 / sum(1 / p for p in parts)


def met(ok):
    """Informational mark beside a target (never an exit status)."""
    return "met" if ok else "NOT met"


def crypto_rows(r):
    """The openssl rows of the machine limits, and the crypto limit of (a)
    (the composite limits of the backends use it)."""
    n = r["nproc"]
    crypto_a = composite([r["sign"], r["verify"]])
    crypto_e = composite([r["ed_sign"], r["ed_verify"]])
    crypto_b = composite([r["sign"], r["sign"], r["verify"], r["aes4k"],
                          r["gunzip4k"]])
    rows = [
        ("rsa2048 sign/s (-multi %d)" % n, "%.0f" % r["sign"],
         "1 per Receipt; (b) +1 key unwrap"),
        ("rsa2048 verify/s (-multi %d)" % n, "%.0f" % r["verify"],
         "1 per signed message"),
        ("ed25519 sign/s (-multi %d)" % n, "%.0f" % r["ed_sign"],
         "(e): 1 per Receipt"),
        ("ed25519 verify/s (-multi %d)" % n, "%.0f" % r["ed_verify"],
         "(e): 1 per signed message"),
        ("aes-128-gcm 4 KiB/s (-multi %d)" % n, "%.0f" % r["aes4k"],
         "(b) payload"),
        ("gunzip 4 KiB/s (zlib x %d)" % n, "%.0f" % r["gunzip4k"],
         "(b) payload"),
        ("crypto limit (a) msg/s", "%.0f" % crypto_a, "1/(1/sign+1/verify)"),
        ("crypto limit (e) msg/s", "%.0f" % crypto_e,
         "1/(1/ed25519 sign+1/ed25519 verify)"),
        ("crypto limit (b) msg/s", "%.0f" % crypto_b,
         "1/(2/sign+1/verify+1/aes+1/gunzip)")]
    return rows, crypto_a


def table_rows(b):
    """The table as rows: ('#', title) section, (label, [4 cells] or str,
    target) figure rows."""
    r = b.res
    rows = []

    def per_c(fn):
        return [fn(c) for c in CONC]

    rows.append(("#", "run", False))
    rows.append(("command", b.a.cmdline, ""))
    rows.append(("date", datetime.datetime.now(datetime.timezone.utc)
                 .strftime("%Y-%m-%d %H:%M UTC") + ", %.0f s in all, load "
                 "average at end %.2f" % (r["elapsed"], r["load_end"]), ""))
    rows.append(("machine", r["machine"], ""))
    rows.append(("versions", r["versions"], ""))
    rows.append(("gateway", "%d worker threads%s; %d s per cell; wrk -t 1 at "
                 "c=1, else -t 2, on the same cores" % (
                     b.threads, " (swept: %s)" % r["threads_sweep"]
                     if "threads_sweep" in r else "", b.dur), ""))
    rows.append(("fsync", "pg_test_fsync -s 1, one 8 kB write, fdatasync: "
                 + r["fsync"], ""))
    rows.append(("#", "machine limits, measured in the same run", True))
    crypto, crypto_a = crypto_rows(r)
    rows += crypto
    rows.append(("HTTP GET /healthz req/s", per_c(
        lambda c: fmt_rate(r.get(("http", c)))), "wrk, same script"))
    rows.append(("  HTTP p50/p99 ms", per_c(
        lambda c: fmt_lat(r.get(("http", c)))), ""))
    if ("pgbench", 1) in r:
        rows.append(("pgbench accept tx/s", per_c(
            lambda c: "%.0f" % r[("pgbench", c)]["rate"]),
            os.path.relpath(os.path.abspath(b.a.pgbench_sql), ROOT)))
        rows.append(("  pgbench p50/p99 ms", per_c(
            lambda c: fmt_lat(r[("pgbench", c)])), "-j 2 (-j 1 at c=1)"))
    for backend in b.a.backends:
        rows += backend_rows(b, backend, crypto_a, per_c)
    if "big" in r:
        big = r["big"]
        rows.append(("#", "one 100 MiB payload (SQLite, fresh gateway)",
                     False))
        rows.append(("how it was sent", big["how"], ""))
        rows.append(("peak RSS (VmHWM)", "%.0f MiB = %.2fx the payload, "
                     "answered in %.1f s%s"
                     % (big["hwm"] / MIB, big["hwm"] / (100 * MIB),
                        big["secs"], "" if big["ok"] else " FAILED"),
                     "target <= 3x: " + met(big["ok"] and
                                            big["hwm"] <= 300 * MIB)))
    return rows


def backend_rows(b, backend, crypto_a, per_c):
    """The rows of one backend: (a), (e), (e)/(a), (b), (c), composite,
    ratio, RSS."""
    r = b.res
    name = "PostgreSQL (fsync, synchronous_commit on)" if backend == "pg" \
        else "SQLite (temp file)"
    rows = [("#", "as4gw on %s" % name, True)]
    for kind in ("a", "e", "b", "c"):
        target = ""
        if backend == "pg" and kind == "a":
            rc = r[(backend, kind, 32)]
            target = "target >= 2000/s at c=32: " + met(
                rc.get("ok") and rc["rate"] >= 2000)
        if kind == "c":
            best = max(r[(backend, kind, c)]["rate"] for c in CONC)
            target = "target >= 10000/s: " + met(best >= 10000)
        rows.append(("%s msg/s" % KIND_NAME[kind], per_c(
            lambda c, k=kind: fmt_rate(r[(backend, k, c)])), target))
        target = ""
        if backend == "pg" and kind == "a":
            target = "target p99 <= 20 ms at c=32: " + met(
                r[(backend, kind, 32)]["p99_us"] <= 20000)
        rows.append(("  (%s) p50/p99 ms" % kind, per_c(
            lambda c, k=kind: fmt_lat(r[(backend, k, c)])), target))
        if kind == "e":
            rows.append(("  (e) / (a) msg/s", per_c(
                lambda c: "%.2f" % (r[(backend, "e", c)]["rate"] /
                                    r[(backend, "a", c)]["rate"])),
                "2.0 (Ed25519) against 1.x (RSA-2048), same run"))
    def ratio_rows(label, comp, how):
        rows.append((label, ["%.0f" % x for x in comp], how))
        rows.append(("  (a) / composite", [
            "%.2f" % (r[(backend, "a", c)]["rate"] / x)
            for c, x in zip(CONC, comp)], ""))

    if backend == "pg":
        ratio_rows("composite limit of (a)", per_c(lambda c: composite([
            r[("http", c)]["rate"], crypto_a, r[("pgbench", c)]["rate"]])),
            "1/(1/http+1/crypto+1/pgbench), all at c")
        ratio_rows("  same, pgbench at min(c,%d)" % b.threads, per_c(
            lambda c: composite([r[("http", c)]["rate"], crypto_a, r[(
                "pgbench", min(c, b.threads))]["rate"]])),
            "the gateway has %d store connections" % b.threads)
    else:
        ratio_rows("composite limit of (a)", per_c(lambda c: composite([
            r[("http", c)]["rate"], crypto_a])),
            "1/(1/http+1/crypto): the store part is not separated")
    idle = r[(backend, "idle")]
    rows.append(("RSS idle (VmRSS after 1 s)", "%.1f MiB" % (idle / MIB),
                 "target <= 16 MiB: " + met(idle <= 16 * MIB)))
    rows.append(("RSS under load (max VmHWM)", "%.1f MiB" % (
        r[(backend, "hwm")] / MIB), "over the cells above"))
    return rows


LABEL_W = 31   # label column of the plain-text table
CELL_W = 12    # each concurrency column


def render_text(rows):
    """Fixed-width plain text: a label column, four concurrency columns and
    a target / note column; a single value spans the concurrency columns."""
    out = []
    for row in rows:
        if row[0] == "#":
            out += ["", "== %s ==" % row[1]]
            if row[2]:
                out.append("%-*s" % (LABEL_W, "") + "".join(
                    "%*s" % (CELL_W, "c=%d" % c) for c in CONC))
            continue
        label, vals, target = row
        if isinstance(vals, str):
            line = "%-*s %s" % (LABEL_W - 1, label, vals)
            if target:
                line = "%-*s   %s" % (LABEL_W + 4 * CELL_W, line, target)
        else:
            line = "%-*s" % (LABEL_W, label) + "".join(
                "%*s" % (CELL_W, v) for v in vals)
            if target:
                line += "   " + target
        out.append(line.rstrip())
    return "\n".join(out[1:]) + "\n"


def render_markdown(rows, notes_text):
    """The same rows as one markdown table (a single value goes in the c=1
    column)."""
    out = ["| figure | c=1 | c=8 | c=32 | c=128 | target / note |",
           "|---|---:|---:|---:|---:|---|"]
    for row in rows:
        if row[0] == "#":
            out.append("| **%s** | | | | | |" % row[1])
            continue
        label, vals, target = row
        if isinstance(vals, str):
            cells = [vals.replace("|", "\\|"), "", "", ""]
        else:
            cells = vals
        out.append("| %s | %s | %s |" % (label.strip(), " | ".join(cells),
                                         target))
    return "\n".join(out) + "\n" + notes_text


def notes(b):
    """Lines under the table: what the marks mean, the problems."""
    lines = ["", "msg/s = answers/s from wrk; p50/p99 = wrk latency per request"
             " (ms). Every (a)/(e)/(b) request is a NEW message (empty store,"
             " fresh gateway per cell);",
             "the gateway's as4gw_messages_total counters were checked after "
             "every cell. '!' = a check failed (see below). The machine may be"
             " shared: figures are noisy."]
    if b.problems:
        lines.append("PROBLEMS:")
        lines += ["  " + p for p in b.problems]
    else:
        lines.append("checks: every cell stored what it answered (new or "
                     "duplicate counters), no answer other than a Receipt.")
    return "\n".join(lines) + "\n"


def parse_args(argv):
    """Command-line options."""
    ap = argparse.ArgumentParser(
        prog="bench/run", description="as4gw benchmark: prints one table "
        "(bench/README.md)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 3 s per cell, short openssl runs")
    ap.add_argument("--duration", type=int, metavar="S",
                    help="seconds per cell (default 10, --quick 3)")
    ap.add_argument("--threads", default="8", metavar="N|auto",
                    help="gateway worker threads (default 8); auto: try 2, 4,"
                    " 8, 16, 32 with (a) on PostgreSQL at c=32 and take the "
                    "fastest")
    ap.add_argument("--out", metavar="FILE",
                    help="also write the table as markdown to FILE")
    ap.add_argument("--backends", default="pg,sqlite",
                    help="comma-separated subset of pg,sqlite (development)")
    ap.add_argument("--skip-big", action="store_true",
                    help="skip the 100 MiB payload")
    ap.add_argument("--big-build-timeout", type=int, metavar="S",
                    help="time `as4gw push` gets to sign the 100 MiB message "
                    "(60, --quick 20); after it the message is sent unsigned")
    ap.add_argument("--big-send-timeout", type=int, default=600, metavar="S",
                    help="time the gateway gets to answer it (600)")
    ap.add_argument("--replay-set", type=int, default=2000, metavar="N",
                    help="messages stored and then replayed in (c) (2000)")
    ap.add_argument("--pgbench-sql", default=os.path.join(
        ROOT, "bench", "pgbench-accept.sql"), metavar="FILE",
        help="pgbench script of the accept transaction")
    ap.add_argument("--as4gw", default=os.path.join(ROOT, "build-bench",
                                                    "as4gw"),
                    help="the as4gw binary (bench/run builds build-bench)")
    ap.add_argument("--pgbin", help="PostgreSQL bin dir (default: newest "
                    "/usr/lib/postgresql/*/bin)")
    ap.add_argument("--tmpdir", help="where the temp dir goes (default $TMPDIR"
                    " or /tmp)")
    ap.add_argument("--keep-tmp", action="store_true",
                    help="keep the temp dir (logs) for inspection")
    ap.add_argument("--cmdline", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.duration is None:
        a.duration = 3 if a.quick else 10
    a.openssl_seconds = 1 if a.quick else 3
    if a.big_build_timeout is None:
        a.big_build_timeout = 20 if a.quick else 60
    a.backends = [x for x in a.backends.split(",") if x]
    if not set(a.backends) <= {"pg", "sqlite"} or not a.backends:
        ap.error("--backends: pg and/or sqlite")
    if a.threads != "auto" and not a.threads.isdigit():
        ap.error("--threads: a number or auto")
    if a.threads == "auto" and "pg" not in a.backends:
        ap.error("--threads auto needs the pg backend")
    if a.cmdline is None:
        a.cmdline = shlex.join(["bench/bench.py"] + argv)
    a.cmdline = a.cmdline.strip()
    return a


def main(argv):
    """Entry point: run, print the table, clean up; exit 1 when a check
    failed (after printing), 2 when the run could not finish."""
    a = parse_args(argv)
    b = Bench(a)

    def on_signal(signum, frame):
        log("%s: cleaning up" % signal.Signals(signum).name)
        raise SystemExit(128 + signum)

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    try:
        b.main()
        rows = table_rows(b)
        sys.stdout.write(render_text(rows) + notes(b))
        if a.out:
            with open(a.out, "w") as f:
                f.write(render_markdown(rows, notes(b)))
    except BenchError as e:
        log("FAILED: %s" % e)
        return 2
    finally:
        b.cleanup()
    return 1 if b.problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
