/*
 * The one address guard for webhook targets (DESIGN section 12): which URLs may be registered, and
 * which IP addresses a delivery may connect to. Registration, the real sender (for every literal
 * and resolved address, at connect time) and the in-memory fake all ask this module, so they can
 * never disagree on what is private. Pure arithmetic on address bytes: every spelling of an
 * address (IPv4-mapped, IPv4-translated, IPv4-compatible, NAT64, 6to4, hex or dotted tails) is
 * reduced to the bytes it names before it is judged.
 */

type Range = readonly [network: readonly number[], prefix: number];

const v4 = (dotted: string): number[] => dotted.split('.').map(Number);
const v4Range = (cidr: string): Range => {
  const [net, prefix] = cidr.split('/');
  return [v4(net), Number(prefix)];
};

/** IPv4 ranges no public receiver has: this network, private, CGNAT, loopback, link-local (metadata), reserved, documentation, multicast, broadcast. */
const PRIVATE_V4: readonly Range[] = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '168.63.129.16/32', // Azure's host endpoint (metadata of another cloud sits in 169.254/16)
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
].map(v4Range);

const v6Range = (groups: number[], prefix: number): Range => [groups.flatMap((g) => [g >> 8, g & 0xff]), prefix];

/** IPv6 ranges no public receiver has (the embedded-IPv4 forms are judged by their IPv4 instead). */
const PRIVATE_V6: readonly Range[] = [
  v6Range([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48), // local-use NAT64
  v6Range([0x100, 0, 0, 0, 0, 0, 0, 0], 64), // discard-only
  v6Range([0x2001, 0, 0, 0, 0, 0, 0, 0], 32), // Teredo: tunnels to an IPv4 address it hides
  v6Range([0x2001, 0x10, 0, 0, 0, 0, 0, 0], 28), // ORCHID
  v6Range([0x2001, 0x20, 0, 0, 0, 0, 0, 0], 28), // ORCHIDv2
  v6Range([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32), // documentation
  v6Range([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20), // documentation
  v6Range([0x5f00, 0, 0, 0, 0, 0, 0, 0], 16), // segment routing
  v6Range([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7), // unique-local (fd00:ec2::254, a cloud's metadata, is one)
  v6Range([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10), // link-local
  v6Range([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10), // site-local (deprecated, still routed by some)
  v6Range([0xff00, 0, 0, 0, 0, 0, 0, 0], 8), // multicast
];

const inRange = (bytes: readonly number[], [network, prefix]: Range): boolean => {
  for (let bit = 0; bit < prefix; bit += 8) {
    const take = Math.min(8, prefix - bit);
    const mask = (0xff << (8 - take)) & 0xff;
    if ((bytes[bit / 8] & mask) !== (network[bit / 8] & mask)) return false;
  }
  return true;
};

/** The four bytes of a dotted IPv4 address in its one canonical spelling, or null. */
function parseV4(text: string): number[] | null {
  const parts = text.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^(0|[1-9]\d{0,2})$/.test(p) || Number(p) > 255)) return null;
  return parts.map(Number);
}

/** The sixteen bytes of an IPv6 address (with `::`, a dotted IPv4 tail, no zone), or null. */
function parseV6(text: string): number[] | null {
  const halves = text.toLowerCase().split('::');
  if (halves.length > 2) return null;
  const groupsOf = (s: string): number[] | null => {
    if (s === '') return [];
    const out: number[] = [];
    const parts = s.split(':');
    for (const [i, p] of parts.entries()) {
      if (i === parts.length - 1 && p.includes('.')) {
        const tail = parseV4(p);
        if (!tail) return null;
        out.push((tail[0] << 8) | tail[1], (tail[2] << 8) | tail[3]);
      } else if (/^[0-9a-f]{1,4}$/.test(p)) out.push(parseInt(p, 16));
      else return null;
    }
    return out;
  };
  const head = groupsOf(halves[0]);
  const tail = halves.length === 2 ? groupsOf(halves[1]) : [];
  if (!head || !tail) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  return [...head, ...new Array<number>(missing).fill(0), ...tail].flatMap((g) => [g >> 8, g & 0xff]);
}

/**
 * The IPv4 address an IPv6 address carries and reaches, for the forms that reach it: IPv4-mapped
 * (`::ffff:a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`), IPv4-compatible (`::a.b.c.d`, with
 * `::` and `::1` among them), NAT64 (`64:ff9b::/96`) and 6to4 (`2002:AABB:CCDD::/48`).
 */
function embeddedV4(b: readonly number[]): number[] | null {
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return b.slice(12);
  if (zero(0, 8) && b[8] === 0xff && b[9] === 0xff && zero(10, 12)) return b.slice(12);
  if (zero(0, 12)) return b.slice(12);
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(4, 12)) return b.slice(12);
  if (b[0] === 0x20 && b[1] === 0x02) return b.slice(2, 6);
  return null;
}

/**
 * Whether a webhook may not be delivered to this IP address: loopback, private, CGNAT, link-local,
 * unique-local, cloud metadata, unspecified, multicast, reserved or documentation ranges, in any
 * IPv6 spelling that reaches one; anything that is not an IP address counts as private.
 */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const four = parseV4(bare);
  if (four) return PRIVATE_V4.some((r) => inRange(four, r));
  if (bare.includes('%')) return true; // a zone: link-local by definition
  const six = parseV6(bare);
  if (!six) return true;
  const inner = embeddedV4(six);
  if (inner) return PRIVATE_V4.some((r) => inRange(inner, r));
  return PRIVATE_V6.some((r) => inRange(six, r));
}

/** Host names that only mean something inside a network (and the metadata services' names). */
const LOCAL_NAME = /(^|\.)(localhost|local|internal|localdomain|home\.arpa|intranet|lan)$/;

/** Whether a URL host (a name or a literal address, brackets allowed) is a literal IP address. */
const isLiteral = (host: string): boolean => parseV4(host) !== null || host.startsWith('[') || host.includes(':');

/**
 * Why this URL may not be a webhook target, or null: it must be an absolute http(s) URL of at most
 * 2048 characters without credentials, and (unless private targets are allowed) its host must not
 * be a local name or a private address in any spelling. A name is judged again, by the addresses
 * it resolves to, when a delivery connects.
 */
export function webhookTargetRefusal(raw: string, options: { allowPrivate: boolean }): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http or https URL';
  if (url.username || url.password) return 'must not carry credentials';
  if (raw.length > 2048) return 'must be at most 2048 characters';
  if (options.allowPrivate) return null;
  // WHATWG URL already turned decimal, octal and hex IPv4 spellings (2130706433, 0x7f.1) into dotted form.
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (isLiteral(host)) return isPrivateAddress(host) ? 'must not be a local or private address' : null;
  // A single-label name (`http://metadata/`) is resolved through the local search domains.
  if (LOCAL_NAME.test(host) || !host.includes('.')) return 'must not be a local or private address';
  return null;
}
