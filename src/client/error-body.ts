/**
 * What a server's (or a gateway's) error body says, in one line. JSON error shapes give their
 * message; an HTML page (a proxy's 502, a login page, a CDN's error) is summarised by its title or
 * first heading rather than dumped; any other text is cut to 500 characters.
 */

function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}…`;
}

const HTML_START = /^\s*(<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>]|<title[\s>]|<center[\s>]|<h1[\s>])/i;

function decodeEntities(s: string): string {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&');
}

function textOf(html: string): string {
  return decodeEntities(html.replace(/<[^>]*>/g, ' ')).replace(/\s+/g, ' ').trim();
}

/** an HTML page as `HTML page "<title>"` (or its first heading, or its first words), else undefined */
export function summarizeHtml(text: string): string | undefined {
  if (!HTML_START.test(text)) return undefined;
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(text)?.[1];
  const heading = /<h1[^>]*>([\s\S]*?)<\/h1>/i.exec(text)?.[1];
  const name = [title, heading].map((t) => (t === undefined ? '' : textOf(t))).find((t) => t.length > 0) ?? truncate(textOf(text), 80);
  return `an HTML page${name ? ` "${truncate(name, 120)}"` : ''} (a proxy or gateway answered, not the engine)`;
}

/**
 * The message of an error body: `{error:{message}}`, `{object:'error',message}`, `{error:'...'}`,
 * `{message}`, `{detail}`; an HTML page summarised; otherwise the text itself (cut to 500 chars).
 */
export function errorMessageFromBody(text: string): string {
  const trimmed = text.trim();
  if (trimmed.length === 0) return '';
  try {
    const json: unknown = JSON.parse(trimmed);
    if (json !== null && typeof json === 'object') {
      const o = json as Record<string, unknown>;
      const e = o.error;
      if (typeof e === 'string' && e.length > 0) return truncate(e, 500);
      if (e !== null && typeof e === 'object') {
        const m = (e as Record<string, unknown>).message;
        if (typeof m === 'string') return truncate(m, 500);
      }
      if (typeof o.message === 'string') return truncate(o.message, 500);
      if (typeof o.detail === 'string') return truncate(o.detail, 500);
      if (o.detail !== undefined) return truncate(JSON.stringify(o.detail), 500);
    }
  } catch {
    // not JSON: use the text
  }
  return summarizeHtml(trimmed) ?? truncate(trimmed, 500);
}

/**
 * A response's Content-Encoding when it is one we did not ask for (we never send Accept-Encoding,
 * so anything but none or `identity`), lowercased; else undefined. undici hands such a body over
 * as it came, so its JSON or event stream cannot be read.
 */
export function unrequestedEncoding(header: string | string[] | undefined): string | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim().toLowerCase();
  return value === undefined || value === '' || value === 'identity' ? undefined : value;
}

/** What to tell the user about a body compressed although we asked for no encoding. */
export function unrequestedEncodingMessage(encoding: string): string {
  return (
    `the response came with Content-Encoding: ${encoding} although the request asked for no encoding; ` +
    'a proxy or gateway on the way compresses it (nginx: gzip off for this location; or have it honour Accept-Encoding)'
  );
}

