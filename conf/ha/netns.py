"""conf/ha/netns.py — the network of `conf/ha/up --netns` (conf/ha/ha.py):
each Patroni node (Patroni and its PostgreSQL) in a network namespace of
its own, so that a node can be cut off the network (issue 15 item 3).

Needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN) and iproute2; no nftables or
iptables.  The layout, for base port BASE:

  - a bridge as4haBASEb in the root namespace, address 10.X.Y.1/24 (X.Y
    from BASE, so parallel deployments on other base ports do not clash);
    etcd listens there too, and the gateways, nginx and the tests stay in
    the root namespace and reach the nodes through it;
  - node i in namespace as4haBASEn<i>, address 10.X.Y.(10+i)/24 on its
    end (as4haBASEp<i>) of a veth pair whose root end (as4haBASEr<i>) is a
    port of the bridge.  Nodes reach each other and etcd on the bridge's
    subnet: no routing, no net.ipv4.ip_forward.

The cut of node i is its root end of the veth set down (`ip link set
as4haBASEr<i> down`): from that moment nothing passes between the node and
etcd, the other nodes or the gateways (packets are dropped, nothing is
refused: connections hang, new ones time out); its processes keep running.
The heal is the link set up again.
"""
import os
import subprocess

PREFIX = 'as4ha'


def _ip(*args, ns=None, check=True):
    argv = ['ip'] + (['netns', 'exec', ns, 'ip'] if ns else []) + list(args)
    r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    if check and r.returncode != 0:
        raise RuntimeError(f'{" ".join(argv)}: {r.stderr.strip()}')
    return r


def available():
    """None when network namespaces, a bridge and a veth pair can be made
    here, else why not."""
    if os.geteuid() != 0:
        return 'not root (network namespaces need CAP_SYS_ADMIN)'
    probe = f'as4hp{os.getpid() % 100000}'
    steps = [('netns', 'add', probe),
             ('link', 'add', probe + 'b', 'type', 'bridge'),
             ('link', 'add', probe + 'v', 'type', 'veth', 'peer', 'name', probe + 'w'),
             ('link', 'set', probe + 'w', 'netns', probe)]
    try:
        for step in steps:
            r = _ip(*step, check=False)
            if r.returncode != 0:
                return f'ip {" ".join(step)} failed: {r.stderr.strip()}'
    except (OSError, subprocess.SubprocessError) as e:
        return f'ip {" ".join(step)} failed: {e}'
    finally:
        for cleanup in (('link', 'del', probe + 'v'), ('link', 'del', probe + 'b'),
                        ('netns', 'del', probe)):
            try:
                _ip(*cleanup, check=False)
            except (OSError, subprocess.SubprocessError):
                pass
    return None


class Net:
    """The namespaces, veths and bridge of the deployment on base port base
    with nodes Patroni nodes (see the module comment)."""

    def __init__(self, base, nodes):
        self.base, self.n = base, nodes
        k = base % 16384
        self.prefix = f'10.{64 + k // 256}.{k % 256}'
        self.bridge = f'{PREFIX}{base}b'

    @property
    def gateway(self):
        """The root namespace's address on the nodes' subnet (etcd's)."""
        return f'{self.prefix}.1'

    @property
    def subnet(self):
        return f'{self.prefix}.0/24'

    def addr(self, i):
        return f'{self.prefix}.{10 + i}'

    def ns(self, i):
        return f'{PREFIX}{self.base}n{i}'

    def veth(self, i):
        """The root end of node i's veth pair: the one cut."""
        return f'{PREFIX}{self.base}r{i}'

    def wrap(self, i, argv):
        """argv run in node i's namespace."""
        return ['ip', 'netns', 'exec', self.ns(i)] + list(argv)

    def up(self):
        """Make the bridge, namespaces and veths (removing leftovers of an
        earlier run on the same base port first)."""
        self.down()
        used = _ip('-o', '-4', 'addr', 'show').stdout
        if f' {self.prefix}.' in used:
            raise RuntimeError(f'{self.subnet} is already in use on this machine '
                               f'(choose another base port)')
        try:
            _ip('link', 'add', self.bridge, 'type', 'bridge')
            _ip('addr', 'add', f'{self.gateway}/24', 'dev', self.bridge)
            _ip('link', 'set', self.bridge, 'up')
            for i in range(self.n):
                self._node(i)
        except Exception:
            self.down()
            raise

    def _node(self, i):
        ns, peer = self.ns(i), f'{PREFIX}{self.base}p{i}'
        _ip('netns', 'add', ns)
        _ip('link', 'add', self.veth(i), 'type', 'veth', 'peer', 'name', peer)
        _ip('link', 'set', peer, 'netns', ns)
        _ip('link', 'set', self.veth(i), 'master', self.bridge)
        _ip('link', 'set', self.veth(i), 'up')
        _ip('link', 'set', 'lo', 'up', ns=ns)
        _ip('addr', 'add', f'{self.addr(i)}/24', 'dev', peer, ns=ns)
        _ip('link', 'set', peer, 'up', ns=ns)

    def cut(self, i):
        _ip('link', 'set', self.veth(i), 'down')

    def heal(self, i):
        _ip('link', 'set', self.veth(i), 'up')

    def down(self):
        """Remove everything up() made; what is not there is skipped."""
        for i in range(3):   # at most three nodes (conf/ha/up --nodes)
            _ip('link', 'del', self.veth(i), check=False)   # and its peer
            _ip('netns', 'del', self.ns(i), check=False)
        _ip('link', 'del', self.bridge, check=False)
