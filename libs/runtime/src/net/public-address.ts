import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Addresses a server must not be made to reach on a caller's behalf: loopback, private (RFC 1918,
 * ULA), link-local (cloud metadata services live at 169.254.169.254), carrier-grade NAT,
 * benchmarking, multicast and reserved ranges. Used for URLs that come from users or models:
 * `web_fetch` targets and completion-callback URLs.
 */
const nonPublic = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  nonPublic.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  nonPublic.addSubnet(net, prefix, 'ipv6');
}

function isNonPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return nonPublic.check(mapped[1], 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return nonPublic.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Why a URL's host must not be contacted. */
export interface HostRefusal {
  /** `unresolvable` may be a passing DNS failure; `non-public` is final. */
  kind: 'unresolvable' | 'non-public';
  message: string;
}

/**
 * Why `url`'s host must not be contacted, or null when every address it resolves to is public.
 * The check cannot stop a DNS answer that changes between this lookup and the connection;
 * callers re-check right before each request to keep that window small.
 */
export async function refuseNonPublicHost(url: URL): Promise<HostRefusal | null> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host)) {
    addresses = [host];
  } else {
    try {
      addresses = (await lookup(host, { all: true })).map((a) => a.address);
    } catch {
      return { kind: 'unresolvable', message: `${url.hostname} does not resolve` };
    }
  }
  const blocked = addresses.find(isNonPublicAddress);
  return blocked === undefined
    ? null
    : {
        kind: 'non-public',
        message: `${url.hostname} resolves to a non-public address (${blocked})`,
      };
}
