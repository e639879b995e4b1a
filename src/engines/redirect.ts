/**
 * A target behind a redirect (issue 60, row 2): a gateway that answers 301/302/303/307/308 for the
 * server's paths (http → https, an old host name, a moved mount). Before anything else the run asks
 * GET <base>/v1/models without following, and where the answer sends the same API to another
 * address, measures that address from then on, saying so once: every request then goes straight
 * to the server, as a redirect followed per request would put its hop into every TTFT.
 *
 * Refused, naming the Location (its query string left out): a redirect to something that is not
 * the same path (a login page), to another server while an API key is set (another host or port,
 * or https → http: the key is not sent where the user did not send it, as curl does not), and more
 * than MAX_REDIRECTS hops. No answer at all is left to the readiness
 * probe that follows.
 */
import { ConfigError } from '../errors.js';
import type { HttpTarget } from '../shapes/engine.js';
import { getJson, redactTarget } from './http.js';
import { redactUrlCredentials } from '../redact.js';

export const MAX_REDIRECTS = 5;
const PROBE_PATH = '/v1/models';
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export interface Redirected {
  /** the base URL the run measures */
  baseUrl: string;
  /** the hops taken, `from → to` (the models path included), secrets redacted; none when not redirected */
  hops: string[];
}

/** The port a URL names, or its scheme's default. */
const portOf = (u: URL): string => u.port || (u.protocol === 'https:' ? '443' : '80');

/**
 * Whether a redirect stays with the server the API key was given for: the same host and port, and
 * the same scheme or http → https (the usual upgrade: port 80 to 443 too); never https → http.
 */
function sameServer(from: URL, to: URL): boolean {
  if (from.hostname !== to.hostname) return false;
  if (from.protocol === to.protocol) return portOf(from) === portOf(to);
  return from.protocol === 'http:' && to.protocol === 'https:' && (portOf(from) === portOf(to) || (portOf(from) === '80' && portOf(to) === '443'));
}

/** The base URL the target's models path redirects to, followed up to MAX_REDIRECTS hops; the target's own where it does not redirect or does not answer. */
export async function followBaseRedirects(target: HttpTarget, timeoutMs = 5_000): Promise<Redirected> {
  let base = target.baseUrl.replace(/\/+$/, '');
  const hops: string[] = [];
  for (let hop = 0; ; hop++) {
    const asked = `${base}${PROBE_PATH}`;
    const res = await getJson({ ...target, baseUrl: base }, PROBE_PATH, { timeoutMs }).catch(() => undefined);
    if (!res || !REDIRECTS.has(res.status) || res.location === undefined) return { baseUrl: base, hops };
    // secrets out, and a query string (tokens ride there: access_token, sig) never shown
    const shown = (u: string) => redactUrlCredentials(redactTarget(u, target)).replace(/\?[^\s]*$/, '?…');
    let next: URL;
    try {
      next = new URL(res.location, asked);
    } catch {
      throw new ConfigError(`GET ${shown(asked)} answered HTTP ${res.status} with a Location that is not a URL (${shown(res.location)}); set LLM_BENCH_URL to the server itself`);
    }
    const to = next.href;
    if (!next.pathname.endsWith(PROBE_PATH)) {
      throw new ConfigError(`GET ${shown(asked)} redirects to ${shown(to)} (HTTP ${res.status}), not to the same API under another address (a login page, a moved site?); set LLM_BENCH_URL to the server itself`);
    }
    if (target.apiKey !== undefined && !sameServer(new URL(asked), next)) {
      throw new ConfigError(`GET ${shown(asked)} redirects to another server, ${shown(to)} (HTTP ${res.status}: another host or port, or from https to http); the API key is not sent where you did not send it: set LLM_BENCH_URL there if that is the server`);
    }
    if (hop + 1 > MAX_REDIRECTS) throw new ConfigError(`GET ${shown(`${target.baseUrl}${PROBE_PATH}`)} redirects more than ${MAX_REDIRECTS} times (last to ${shown(to)}); set LLM_BENCH_URL to the server itself`);
    hops.push(`${shown(asked)} → ${shown(to)} (HTTP ${res.status})`);
    base = `${next.origin}${next.pathname.slice(0, -PROBE_PATH.length)}`.replace(/\/+$/, '');
  }
}
