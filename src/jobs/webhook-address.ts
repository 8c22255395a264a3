// Where a webhook may be sent. A customer names a URL; the service must not become their way into
// its own network (a metadata endpoint, a database on loopback, an internal admin page). So a URL
// must be https and every address its host resolves to must be public unicast, unless the
// deployment allows private networks (WEBHOOK_ALLOW_PRIVATE_NETWORKS, for tests and development,
// where plain http is allowed on loopback only). The check runs when an endpoint is saved and again
// inside each delivery's connection (`checkedLookup`): the address connected to is the address
// checked, so a name that resolves to a public address at creation and a private one later (DNS
// rebinding) is refused at delivery.

import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { promisify } from 'node:util';
import ipaddr from 'ipaddr.js';

export interface AddressPolicy {
  allowPrivateNetworks: boolean;
}

/** Why a URL or an address was refused: the reason code is `invalid_webhook_url`. */
export class WebhookAddressRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookAddressRefused';
  }
}

const lookupAll = promisify(dnsLookup) as (host: string, o: { all: true; verbatim: true }) => Promise<LookupAddress[]>;

/** Whether an address is one a webhook may reach: public unicast, or anything when private networks are allowed. */
export function addressAllowed(address: string, policy: AddressPolicy): boolean {
  if (policy.allowPrivateNetworks) return true;
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  return parsed.range() === 'unicast';
}

function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  return ipaddr.isValid(bare) && ipaddr.process(bare).range() === 'loopback';
}

/** The URL's form alone (scheme, credentials, host): a message naming what is wrong, or undefined. */
export function urlProblem(raw: string, policy: AddressPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.username || url.password) return 'must not carry a user name or password';
  if (url.hash) return 'must not have a #fragment';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:') {
    if (policy.allowPrivateNetworks && isLoopbackHost(url.hostname)) return undefined;
    return policy.allowPrivateNetworks ? 'must be https (plain http is allowed for loopback only)' : 'must be https';
  }
  return `must be https, not ${url.protocol.replace(/:$/, '')}`;
}

/** Checks the URL's form and every address its host resolves to now; throws WebhookAddressRefused. */
export async function checkWebhookUrl(raw: string, policy: AddressPolicy): Promise<void> {
  const problem = urlProblem(raw, policy);
  if (problem) throw new WebhookAddressRefused(`The URL ${problem}.`);
  if (policy.allowPrivateNetworks) return;
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
  let addresses: LookupAddress[];
  try {
    addresses = ipaddr.isValid(host) ? [{ address: host, family: host.includes(':') ? 6 : 4 }] : await lookupAll(host, { all: true, verbatim: true });
  } catch {
    throw new WebhookAddressRefused(`The host ${host} does not resolve.`);
  }
  const refused = addresses.find((a) => !addressAllowed(a.address, policy));
  if (refused) throw new WebhookAddressRefused(`The host ${host} resolves to ${refused.address}, a private, loopback, link-local or reserved address.`);
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for node:http's connection: resolves as usual, then refuses the connection when any
 * address is not allowed. The request then fails with this error's code, `EWEBHOOKADDRESS`.
 */
export function checkedLookup(policy: AddressPolicy) {
  return (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true, verbatim: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as LookupAddress[];
      const refused = list.find((a) => !addressAllowed(a.address, policy));
      if (refused) {
        const e: NodeJS.ErrnoException = new WebhookAddressRefused(`${hostname} resolves to ${refused.address}, which webhooks may not reach.`);
        e.code = 'EWEBHOOKADDRESS';
        return callback(e, []);
      }
      if (options.all) return callback(null, list);
      const first = list[0]!;
      callback(null, first.address, first.family);
    });
  };
}
