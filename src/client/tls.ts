/**
 * A TLS failure, named with its fix. Node verifies an https server's certificate against its own
 * CA list; a self-signed or private-CA certificate fails every call the same way, so it is a setup
 * error to state once, never "the server is not answering" retried for half a minute.
 */

const TLS_PROBLEMS: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the server\'s certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'the server\'s certificate chain ends in a self-signed CA that Node does not trust',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'the server\'s certificate is signed by a CA that Node does not know',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'the server\'s certificate is signed by a CA that Node does not know',
  UNABLE_TO_GET_ISSUER_CERT: 'the server\'s certificate is signed by a CA that Node does not know',
  CERT_HAS_EXPIRED: 'the server\'s certificate has expired',
  CERT_NOT_YET_VALID: 'the server\'s certificate is not valid yet (check the clocks)',
  ERR_TLS_CERT_ALTNAME_INVALID: 'the server\'s certificate is for another host name',
  CERT_UNTRUSTED: 'the server\'s certificate is not trusted',
};

function codeChain(err: unknown): string[] {
  const codes: string[] = [];
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e !== null && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    e = (e as { cause?: unknown }).cause;
  }
  return codes;
}

/**
 * When `err` is a certificate failure: what is wrong and the fix, in one sentence; else undefined.
 */
export function tlsProblem(err: unknown): string | undefined {
  const code = codeChain(err).find((c) => c in TLS_PROBLEMS || /^ERR_SSL_|^ERR_TLS_/.test(c));
  if (code === undefined) return undefined;
  const what = TLS_PROBLEMS[code] ?? 'the TLS handshake failed';
  const fix =
    code === 'ERR_TLS_CERT_ALTNAME_INVALID'
      ? 'use the host name the certificate names in the URL'
      : code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID'
        ? 'renew the certificate'
        : 'give Node the CA that signed it: NODE_EXTRA_CA_CERTS=/path/to/ca.pem npx vitest bench --run';
  return `TLS: ${what} (${code}); ${fix}`;
}
