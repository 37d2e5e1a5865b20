/**
 * A string of a tool's input as whoever takes it for a URL may read it: as a URL parser reads it
 * (WHATWG's, which the MCP SDKs and fetch tools use, and Python's drop tabs and line breaks
 * anywhere and trim spaces and controls at the ends), with percent escapes decoded (twice
 * encoded too); and the paths of those readings that are `file:` URLs. Resources, fetch tools
 * and file servers take URLs, so `file:///home/me/%2Ela\ttch/totp.json` names Latch's secret as
 * plainly as its path does. `texts` holds the text as given first.
 */
export function urlReadings(text: string): { texts: string[]; files: string[] } {
  let current = asUrlParsersRead(text);
  const texts = new Set([text, current]);
  for (let round = 0; round < 3 && /%[0-9a-f]{2}/i.test(current); round++) {
    current = asUrlParsersRead(percentDecoded(current));
    texts.add(current);
  }
  const files = new Set([...texts].flatMap((reading) => fileUrlPath(reading) ?? []));
  return { texts: [...texts], files: [...files] };
}

const asUrlParsersRead = (text: string) =>
  text.replace(/[\t\n\r]/g, '').replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '');

/** The path a `file:` URL names, whatever its host, as WHATWG's parser reads it (`\` is `/`). */
function fileUrlPath(text: string): string | undefined {
  if (!/^file:/i.test(text)) return undefined;
  try {
    return percentDecoded(new URL(text).pathname);
  } catch {
    return undefined;
  }
}

/** `decodeURIComponent`, or where it refuses (an escape that is not UTF-8) the ASCII escapes alone. */
function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text.replace(/%([0-7][0-9a-f])/gi, (_escape, hex: string) =>
      String.fromCharCode(parseInt(hex, 16)),
    );
  }
}
