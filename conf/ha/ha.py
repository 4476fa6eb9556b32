#!/usr/bin/env python3
"""conf/ha — the as4gw reference deployment for high availability, on one
machine (README "High availability"): a one-member etcd, two or three
PostgreSQL nodes managed by Patroni with synchronous replication, two
`as4gw serve` instances on a multi-host DSN that follows the primary, and
the shipped nginx (conf/nginx/as4gw.conf) in front of them.

Everything listens on 127.0.0.1, on ports BASE .. BASE+49, and lives under
one directory; processes run in the foreground of their own (no systemd),
their pids in DIR/pids.  As root, etcd and nginx run as root and Patroni
(and so PostgreSQL) as the postgres user, as scripts/test runs its
PostgreSQL.  Used by conf/ha/up and conf/ha/down, by
tests/integration/test_ha_failover.py and bench/failover.

Ports: etcd BASE (client) and BASE+1 (peer); node i (0..2) PostgreSQL
BASE+10+i and Patroni REST API BASE+20+i; as4gw instance i BASE+30+i; nginx
(TLS) BASE+40.

With --netns (Cluster(netns=True); root only) each Patroni node runs in a
network namespace of its own on a bridge (conf/ha/netns.py): node i's
PostgreSQL and REST API listen on 10.X.Y.(10+i) instead of 127.0.0.1 and
etcd on the bridge's 10.X.Y.1 too, so that `Cluster.cut(i)` can cut the
node off the network (its veth set down: etcd, the other node and the
gateways lose it at once) and `Cluster.heal(i)` bring it back.  A cut
primary loses its leader lock after ttl and demotes itself, the synchronous
standby is promoted; the gateways' connections to the cut node hang (no
answer, no reset) until <storeTimeoutSeconds> (or tcp_user_timeout) ends
each wait with a 503 + Retry-After, and their reconnects skip it after
connect_timeout; after the heal the old primary rejoins as a standby
(pg_rewind).  conf/ha/down removes the namespaces, veths and bridge.
"""
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import netns as netns_mod

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
NGINX_SITE = os.path.join(SRC, 'conf', 'nginx', 'as4gw.conf')
SCOPE = 'as4gw'

# Patroni's timing (Patroni docs "Dynamic configuration settings"):
# ttl >= loop_wait + 2 * retry_timeout.  'demo' is for tests and this
# script (a failover in a few seconds); 'default' is Patroni's own.
TIMINGS = {
    'demo': {'ttl': 10, 'loop_wait': 1, 'retry_timeout': 4},
    'default': {'ttl': 30, 'loop_wait': 10, 'retry_timeout': 10},
}


def pg_bin():
    """The newest /usr/lib/postgresql/N/bin, or None."""
    root = '/usr/lib/postgresql'
    if not os.path.isdir(root):
        return None
    vers = sorted((d for d in os.listdir(root) if d.isdigit()), key=int)
    for v in reversed(vers):
        b = os.path.join(root, v, 'bin')
        if os.path.exists(os.path.join(b, 'pg_ctl')):
            return b
    return None


def missing_tools():
    """What this deployment needs and is not installed (Debian packages)."""
    need = {'patroni': 'patroni', 'etcd': 'etcd-server', 'etcdctl': 'etcd-client',
            'nginx': 'nginx'}
    out = [pkg for exe, pkg in need.items()
           if shutil.which(exe) is None and not os.path.exists('/usr/sbin/' + exe)]
    if pg_bin() is None:
        out.append('postgresql')
    return out


def patroni_config(d, i, base, timing, pgbin, net=None):
    """Node i's Patroni configuration (Patroni 3.0 keys; YAML is a superset
    of the JSON written); net: a netns.Net (--netns) or None."""
    node = os.path.join(d, f'pg{i}')
    host = net.addr(i) if net else '127.0.0.1'
    peers = net.subnet if net else '127.0.0.1/32'
    conf = {
        'scope': SCOPE,
        'namespace': '/service/',
        'name': f'pg{i}',
        'restapi': {'listen': f'{host}:{base + 20 + i}',
                    'connect_address': f'{host}:{base + 20 + i}'},
        'etcd3': {'hosts': [f'{net.gateway if net else "127.0.0.1"}:{base}']},
        'bootstrap': {
            # the cluster-wide settings, written to etcd by the first node
            'dcs': dict(TIMINGS[timing], **{
                'maximum_lag_on_failover': 1048576,
                # a crashed primary fails over at once instead of being
                # restarted in place (safe: only a synchronous standby is
                # ever promoted in synchronous_mode)
                'primary_start_timeout': 0,
                # an acknowledged COMMIT is on two nodes; see README "High
                # availability" for strict and what losing the standby does
                'synchronous_mode': True,
                'synchronous_mode_strict': False,
                'postgresql': {
                    'use_pg_rewind': True,
                    'use_slots': True,
                    'parameters': {
                        'synchronous_commit': 'on',
                        'wal_log_hints': 'on',
                        'max_connections': 200,
                        'max_wal_senders': 10,
                        'max_replication_slots': 10,
                        'wal_keep_size': '128MB',
                    },
                },
            }),
            'initdb': [{'encoding': 'UTF8'}, {'auth': 'trust'}],
        },
        'postgresql': {
            'listen': f'{host}:{base + 10 + i}',
            'connect_address': f'{host}:{base + 10 + i}',
            'data_dir': os.path.join(node, 'data'),
            'bin_dir': pgbin,
            'pgpass': os.path.join(node, 'pgpass'),
            # loopback demo: trust.  Real hosts: scram-sha-256 and TLS
            # (README "High availability").
            'pg_hba': ['local all all trust',
                       f'host replication replicator {peers} trust',
                       f'host all all {peers} trust'],
            'authentication': {
                'superuser': {'username': 'postgres', 'password': 'demo-only'},
                'replication': {'username': 'replicator', 'password': 'demo-only'},
                'rewind': {'username': 'rewinder', 'password': 'demo-only'},
            },
            'parameters': {'unix_socket_directories': node},
        },
        'tags': {'nofailover': False, 'noloadbalance': False,
                 'clonefrom': False, 'nosync': False},
    }
    if net:
        # Patroni's own connections to its PostgreSQL: not over the network
        conf['postgresql']['use_unix_socket'] = True
    return conf


def as4gw_config(d, pki):
    """A development gateway configuration (the dev PKI, two sample legs)."""
    path = os.path.join(d, 'as4gw.xml')
    leg = '''  <pmode id="dev-{id}">
    <from role="http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/initiator"><partyId>urn:as4gw:dev:sender</partyId></from>
    <to role="http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/responder"><partyId>urn:as4gw:dev:gateway</partyId></to>
    <service>urn:as4gw:dev:service</service>
    <action>urn:as4gw:dev:{action}</action>
    {security}
  </pmode>
'''
    signed = (f'<security signing="required"><signer><certificate>{pki}/sender.crt'
              f'</certificate></signer><trust><anchor>{pki}/ca.crt</anchor></trust>'
              '</security>')
    with open(path, 'w') as f:
        f.write(f'''<?xml version="1.0" encoding="UTF-8"?>
<!-- conf/ha demo: DEVELOPMENT keys, never for production -->
<as4gw xmlns="urn:as4gw:config:1">
  <gateway>
    <listen>127.0.0.1:8080</listen>
    <threads>4</threads>
    <trustedProxies><proxy>127.0.0.1</proxy></trustedProxies>
    <signing><certificate>{pki}/gateway.crt</certificate><key>{pki}/gateway.key</key></signing>
    <limits><perIpConnections>512</perIpConnections></limits>
  </gateway>
{leg.format(id='sample', action='Deliver', security='<security signing="never" encryption="never"/>')}{leg.format(id='signed', action='SignedOnly', security=signed)}</as4gw>
''')
    return path


def nginx_config(d, base, pki):
    """The shipped site with this deployment's ports and paths, inside a
    minimal nginx.conf (as tests/integration/test_nginx.py renders it)."""
    with open(NGINX_SITE) as f:
        text = f.read()
    subs = [('    listen 443 ssl;\n', f'    listen 127.0.0.1:{base + 40} ssl;\n'),
            ('    listen [::]:443 ssl;\n', ''),
            ('server 127.0.0.1:8080 ', f'server 127.0.0.1:{base + 30} '),
            ('#server 127.0.0.1:8081 ', f'server 127.0.0.1:{base + 31} '),
            ('/etc/as4gw/tls/REPLACE-ME-server-fullchain.pem', f'{pki}/tls.crt'),
            ('/etc/as4gw/tls/REPLACE-ME-server.key', f'{pki}/tls.key'),
            ('/var/log/nginx/', f'{d}/nginx/')]
    for old, new in subs:
        if old not in text:
            raise RuntimeError(f'{NGINX_SITE} no longer contains {old!r}')
        text = text.replace(old, new)
    nd = os.path.join(d, 'nginx')
    os.makedirs(nd, exist_ok=True)
    with open(os.path.join(nd, 'as4gw.conf'), 'w') as f:
        f.write(text)
    user = 'user root;\n' if os.getuid() == 0 else ''
    temps = ''.join(f'    {k}_temp_path {nd}/{k};\n'
                    for k in ('client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'))
    conf = os.path.join(nd, 'nginx.conf')
    with open(conf, 'w') as f:
        f.write(f'''{user}daemon off;
worker_processes 1;
pid {nd}/nginx.pid;
error_log {nd}/nginx-error.log info;
events {{ worker_connections 1024; }}
http {{
{temps}    access_log {nd}/access.log;
    include {nd}/as4gw.conf;
}}
''')
    return conf


def http_status(url, timeout=1.0):
    """The HTTP status of a GET, or None when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return None


class Cluster:
    """The deployment under directory d (see the module comment)."""

    def __init__(self, d, base=27000, nodes=2, timing='demo', as4gw_bin=None,
                 log=None, netns=False):
        self.d = os.path.abspath(d)
        self.net = netns_mod.Net(base, nodes) if netns else None
        self.base, self.n, self.timing = base, nodes, timing
        self.bin = as4gw_bin
        self.pgbin = pg_bin()
        self.procs = {}          # name -> Popen
        self.log = log or (lambda msg: None)
        self.as_root = os.getuid() == 0

    # ---- addresses ----------------------------------------------------
    def host(self, i):
        """Node i's address: 127.0.0.1, or its namespace's (--netns)."""
        return self.net.addr(i) if self.net else '127.0.0.1'

    def pg_port(self, i):
        return self.base + 10 + i

    def rest(self, i, path=''):
        return f'http://{self.host(i)}:{self.base + 20 + i}{path}'

    def gw_port(self, i):
        return self.base + 30 + i

    @property
    def nginx_port(self):
        return self.base + 40

    def dsn(self, db='as4gw'):
        """The multi-host DSN the gateways use: the first host that takes
        writes (libpq target_session_attrs=read-write)."""
        hosts = ','.join(f'{self.host(i)}:{self.pg_port(i)}' for i in range(self.n))
        return f'postgresql://postgres@{hosts}/{db}?target_session_attrs=read-write'

    def node_dsn(self, i, db='as4gw'):
        return f'postgresql://postgres@{self.host(i)}:{self.pg_port(i)}/{db}'

    # ---- processes ------------------------------------------------------
    def _spawn(self, name, argv, as_postgres=False):
        logf = open(os.path.join(self.d, 'log', name + '.log'), 'ab')
        kw = {}
        if as_postgres and self.as_root:
            kw = {'user': 'postgres', 'group': 'postgres', 'extra_groups': []}
        p = subprocess.Popen(argv, stdout=logf, stderr=subprocess.STDOUT,
                             start_new_session=True, **kw)
        logf.close()
        self.procs[name] = p
        with open(os.path.join(self.d, 'pids'), 'a') as f:
            f.write(f'{name} {p.pid}\n')
        return p

    def start_etcd(self):
        b = self.base
        # --netns: on the bridge too, and advertised there (the nodes'
        # etcd client discovers the members' addresses)
        adv = f'http://{self.net.gateway if self.net else "127.0.0.1"}:{b}'
        listen = f'http://127.0.0.1:{b}' + (f',{adv}' if self.net else '')
        self._spawn('etcd', [
            'etcd', '--name', 'ha0', '--data-dir', os.path.join(self.d, 'etcd'),
            '--listen-client-urls', listen,
            '--advertise-client-urls', adv,
            '--listen-peer-urls', f'http://127.0.0.1:{b + 1}',
            '--initial-advertise-peer-urls', f'http://127.0.0.1:{b + 1}',
            '--initial-cluster', f'ha0=http://127.0.0.1:{b + 1}',
            '--initial-cluster-state', 'new'])
        self._wait(lambda: http_status(f'http://127.0.0.1:{b}/health') == 200,
                   30, 'etcd healthy')

    def write_node(self, i):
        node = os.path.join(self.d, f'pg{i}')
        os.makedirs(node, exist_ok=True)
        if self.as_root:
            pw = pwd.getpwnam('postgres')
            os.chown(node, pw.pw_uid, pw.pw_gid)
        path = os.path.join(node, 'patroni.yml')
        with open(path, 'w') as f:
            json.dump(patroni_config(self.d, i, self.base, self.timing,
                                     self.pgbin, self.net), f, indent=1)
        return path

    def start_node(self, i):
        argv = ['patroni', os.path.join(self.d, f'pg{i}', 'patroni.yml')]
        if self.net is None:
            self._spawn(f'patroni{i}', argv, as_postgres=True)
            return
        # entering the namespace needs root: the user changes after it
        # (ip netns exec and setpriv exec, the pid is Patroni's)
        if self.as_root:
            argv = ['setpriv', '--reuid=postgres', '--regid=postgres',
                    '--clear-groups'] + argv
        self._spawn(f'patroni{i}', self.net.wrap(i, argv))

    def cut(self, i):
        """Cut node i off the network (--netns only; module comment)."""
        self.net.cut(i)

    def heal(self, i):
        self.net.heal(i)

    def stop_node(self, i, sig=signal.SIGTERM, timeout=60):
        p = self.procs.get(f'patroni{i}')
        if p is None or p.poll() is not None:
            return
        p.send_signal(sig)
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()

    def leader(self):
        """The node whose Patroni says it is the running primary, or None."""
        for i in range(self.n):
            if http_status(self.rest(i, '/primary')) == 200:
                return i
        return None

    def sync_standby(self):
        """A node Patroni reports as the synchronous standby, or None."""
        for i in range(self.n):
            if http_status(self.rest(i, '/sync')) == 200:
                return i
        return None

    def postmaster_pid(self, i):
        with open(os.path.join(self.d, f'pg{i}', 'data', 'postmaster.pid')) as f:
            return int(f.readline())

    def psql(self, i, sql, db='postgres'):
        """Run sql on node i as postgres; its tuples-only output."""
        r = subprocess.run([os.path.join(self.pgbin, 'psql'), '-XAtq', '-v',
                            'ON_ERROR_STOP=1', '-h', self.host(i), '-p',
                            str(self.pg_port(i)), '-U', 'postgres', '-d', db,
                            '-c', sql], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError(f'psql on pg{i}: {r.stderr.strip()}')
        return r.stdout.strip()

    def _wait(self, cond, timeout, what):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if cond():
                return
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise RuntimeError(f'{name} exited {p.returncode} waiting for '
                                       f'{what}; see {self.d}/log/{name}.log')
            time.sleep(0.2)
        raise RuntimeError(f'timed out ({timeout} s) waiting for {what}; logs in {self.d}/log')

    def start_db(self):
        """etcd, then the Patroni nodes; returns once there is a primary with
        a synchronous standby and the as4gw database exists."""
        os.makedirs(os.path.join(self.d, 'log'), exist_ok=True)
        os.chmod(self.d, 0o755)   # the postgres user must reach its node dirs
        if self.net is not None:
            with open(os.path.join(self.d, 'netns'), 'w') as f:
                f.write(f'{self.base} {self.n}\n')   # for down()
            self.net.up()
        self.start_etcd()
        for i in range(self.n):
            self.write_node(i)
        self.start_node(0)    # the first one bootstraps (initdb) ...
        self._wait(lambda: self.leader() == 0, 120, 'pg0 primary')
        for i in range(1, self.n):   # ... the others clone from it
            self.start_node(i)
        self._wait(lambda: self.sync_standby() is not None, 120,
                   'a synchronous standby')
        if self.psql(0, "SELECT count(*) FROM pg_database WHERE datname = 'as4gw'") == '0':
            self.psql(0, 'CREATE DATABASE as4gw')
        self.log(f'database: primary pg0, synchronous standby pg{self.sync_standby()}')

    def start_gateways(self, config=None):
        """Two `as4gw serve` instances on the multi-host DSN, then nginx."""
        pki = os.path.join(self.d, 'pki')
        if config is None:
            subprocess.run([os.path.join(SRC, 'certs', 'gen-dev-pki.sh'), pki],
                           check=True, capture_output=True)
            config = as4gw_config(self.d, pki)
        for i in range(2):
            self._spawn(f'as4gw{i}', [self.bin, 'serve', '-c', config, '--listen',
                                      f'127.0.0.1:{self.gw_port(i)}', '--db', self.dsn()])
        for i in range(2):
            self._wait(lambda i=i: http_status(
                f'http://127.0.0.1:{self.gw_port(i)}/readyz') == 200, 60,
                f'as4gw{i} ready')
        if os.path.exists(os.path.join(pki, 'tls.crt')):
            conf = nginx_config(self.d, self.base, pki)
            nginx = shutil.which('nginx') or '/usr/sbin/nginx'
            self._spawn('nginx', [nginx, '-p', os.path.dirname(conf), '-c', conf])
            self._wait(lambda: http_status(
                f'http://127.0.0.1:{self.nginx_port}/') is not None, 30, 'nginx')

    def stop(self):
        """Everything this object started, in reverse order."""
        for name in reversed(list(self.procs)):
            p = self.procs[name]
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
        if self.net is not None:
            self.net.down()


def down(d):
    """Stop what conf/ha/up started under d (from d/pids, newest first),
    then remove its network namespaces (d/netns, --netns)."""
    try:
        _down_pids(os.path.join(d, 'pids'))
    finally:
        path = os.path.join(d, 'netns')
        if os.path.exists(path):
            with open(path) as f:
                base, n = (int(x) for x in f.read().split())
            netns_mod.Net(base, n).down()
            os.unlink(path)
            print(f'removed the network namespaces of base port {base}')


def _down_pids(path):
    if not os.path.exists(path):
        return
    with open(path) as f:
        entries = [l.split() for l in f if l.strip()]
    for name, pid in reversed(entries):
        pid = int(pid)
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                os.killpg(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.2)
        else:
            os.killpg(pid, signal.SIGKILL)
        print(f'stopped {name} ({pid})')
    os.unlink(path)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(prog='conf/ha/up', description=__doc__.split('\n\n')[0])
    ap.add_argument('dir')
    ap.add_argument('--port', type=int, default=27000, help='base port (default 27000)')
    ap.add_argument('--nodes', type=int, choices=(2, 3), default=2)
    ap.add_argument('--timing', choices=sorted(TIMINGS), default='demo')
    ap.add_argument('--as4gw', default=os.environ.get('AS4GW_BIN',
                    os.path.join(SRC, 'build', 'as4gw')), help='the as4gw binary')
    ap.add_argument('--config', help='as4gw.xml for the instances, plain HTTP (no '
                    '<tls>: nginx terminates TLS; default: a development one with a '
                    'throw-away PKI)')
    ap.add_argument('--db-only', action='store_true', help='etcd and PostgreSQL only')
    ap.add_argument('--netns', action='store_true', help='each node in a network '
                    'namespace of its own, to be cut off the network (root only)')
    a = ap.parse_args(argv)
    why = netns_mod.available() if a.netns else None
    if why:
        sys.exit(f'conf/ha/up: --netns: {why}')
    missing = missing_tools()
    if missing:
        sys.exit('conf/ha/up: missing Debian packages: apt-get install -y ' + ' '.join(missing))
    if not a.db_only and not os.access(a.as4gw, os.X_OK):
        sys.exit(f'conf/ha/up: no as4gw binary at {a.as4gw} (build it: scripts/run, '
                 f'or --as4gw BIN, or --db-only)')
    os.makedirs(a.dir, exist_ok=True)
    if os.path.exists(os.path.join(a.dir, 'pids')):
        sys.exit(f'conf/ha/up: {a.dir}/pids exists: run conf/ha/down {a.dir} first')
    t0 = time.time()
    c = Cluster(a.dir, a.port, a.nodes, a.timing, a.as4gw, log=print, netns=a.netns)
    try:
        c.start_db()
        if not a.db_only:
            c.start_gateways(a.config)
    except Exception:
        c.stop()
        for f in ('pids', 'netns'):
            if os.path.exists(os.path.join(c.d, f)):
                os.unlink(os.path.join(c.d, f))
        raise
    print(f'up in {time.time() - t0:.1f} s under {c.d}')
    print(f'  DSN      {c.dsn()}')
    if not a.db_only:
        print(f'  as4gw    http://127.0.0.1:{c.gw_port(0)}/  http://127.0.0.1:{c.gw_port(1)}/')
        print(f'  nginx    https://127.0.0.1:{c.nginx_port}/as4')
    print(f'  patroni  patronictl -c {c.d}/pg0/patroni.yml list')
    if c.net is not None:
        print(f'  cut      ip link set {c.net.veth(0)} down   (node 0; heal: up)')
    print(f'  stop     conf/ha/down {c.d}')


if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == 'down':
        for d in sys.argv[2:]:
            down(d)
    else:
        main(sys.argv[1:])
